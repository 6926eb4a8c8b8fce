package export

import (
	"bytes"
	"strings"
	"testing"
)

// engineBand is a recommendation of env with the lane's base env base.
func engineBand(env, base map[string]string) *Recommendation {
	b := hostileBand(env)
	b.Study.BaseEnv = base
	return b
}

// TestExportForEngine: an export for SGLang refuses a variable SGLang
// assigns over the env (from the recommendation, a kept baseline or the
// base env with --with-base), naming the flag to use, in every env
// format; its header names the flags; vLLM's own assignment is said, not
// refused (it keeps a value the env holds); without --export-for, one
// note line where the env holds such a variable.
func TestExportForEngine(t *testing.T) {
	kept := engineBand(map[string]string{"NCCL_NVLS_ENABLE": "0"}, nil)
	kept.KeepBaseline = true
	for _, tc := range []struct {
		name     string
		band     *Recommendation
		opts     Options
		refusal  []string // words of the error; nil: written
		header   []string // lines the header must hold
		noHeader string   // a text the header must not hold
	}{
		{"sglang, recommended", engineBand(map[string]string{"NCCL_CUMEM_ENABLE": "1", "NCCL_PROTO": "^LL128"}, nil), Options{Engine: EngineSGLang},
			[]string{"cannot export NCCL_CUMEM_ENABLE=1 for SGLang", "--enable-symm-mem", "drop NCCL_CUMEM_ENABLE from the recommendation"}, nil, ""},
		{"sglang, base env with --with-base", engineBand(map[string]string{"NCCL_PROTO": "^LL128"}, map[string]string{"NCCL_NVLS_ENABLE": "0"}), Options{Engine: EngineSGLang, WithBase: true},
			[]string{"NCCL_NVLS_ENABLE=0 for SGLang", "--enable-nccl-nvls", "leave out --with-base"}, nil, ""},
		{"sglang, kept baseline", kept, Options{Engine: EngineSGLang},
			[]string{"--enable-nccl-nvls", "from your baseline"}, nil, ""},
		{"sglang, base env not written", engineBand(map[string]string{"NCCL_PROTO": "^LL128"}, map[string]string{"NCCL_NVLS_ENABLE": "0"}), Options{Engine: EngineSGLang},
			nil, []string{"# for SGLang: NCCL_CUMEM_ENABLE: ", "choose it with --enable-symm-mem, not the env", "# for SGLang: NCCL_NVLS_ENABLE: ", "choose it with --enable-nccl-nvls, not the env"}, "for vLLM"},
		{"vllm, recommended", engineBand(map[string]string{"NCCL_CUMEM_ENABLE": "1"}, nil), Options{Engine: EngineVLLM},
			nil, []string{"# for vLLM: NCCL_CUMEM_ENABLE: vLLM 0.9.1 to 0.10 sets it to 0 where the env leaves it unset"}, "for SGLang"},
		{"no engine, env holds one", engineBand(map[string]string{"NCCL_CUMEM_ENABLE": "1"}, nil), Options{},
			nil, []string{"# NCCL_CUMEM_ENABLE: SGLang and vLLM set this themselves at start; export with --export-for sglang|vllm to see how"}, "for SGLang"},
		{"no engine, base env holds one", engineBand(map[string]string{"NCCL_PROTO": "^LL128"}, map[string]string{"NCCL_NVLS_ENABLE": "1"}), Options{},
			nil, []string{"# NCCL_NVLS_ENABLE: SGLang set this themselves at start"}, ""},
		{"no engine, none held", engineBand(map[string]string{"NCCL_PROTO": "^LL128"}, nil), Options{},
			nil, nil, "--export-for"},
	} {
		for _, f := range Formats {
			if f == FormatTuner {
				continue // the CSV holds no env
			}
			t.Run(tc.name+"/"+string(f), func(t *testing.T) {
				var buf bytes.Buffer
				o := tc.opts
				o.Now = fixedNow
				err := Write(&buf, f, []*Recommendation{tc.band}, o)
				if tc.refusal != nil {
					if err == nil {
						t.Fatalf("written, want a refusal:\n%s", buf.String())
					}
					for _, w := range tc.refusal {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("refusal lacks %q: %v", w, err)
						}
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if f == FormatJSON {
					return // no header
				}
				out := buf.String()
				for _, w := range tc.header {
					if !strings.Contains(out, w) {
						t.Errorf("header lacks %q:\n%s", w, out)
					}
				}
				if tc.noHeader != "" && strings.Contains(out, tc.noHeader) {
					t.Errorf("header holds %q:\n%s", tc.noHeader, out)
				}
				if n := strings.Count(out, "set this themselves"); n > 1 {
					t.Errorf("%d note lines, want one", n)
				}
			})
		}
	}
}

func TestParseEngine(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"sglang", "sglang", ""}, {"SGLang", "sglang", ""}, {"vLLM", "vllm", ""},
		{"sglan", "", "did you mean sglang?"}, {"trt", "", "want one of sglang, vllm"},
	} {
		got, err := ParseEngine(tc.in)
		if string(got) != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseEngine(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}
