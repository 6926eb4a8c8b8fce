package export

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Engine is a serving engine an env export can be made for
// (--export-for): the engines set some NCCL variables themselves when
// they start, whatever a recipe put in the env.
type Engine string

// The engines, as --export-for spells them.
const (
	EngineSGLang Engine = "sglang"
	EngineVLLM   Engine = "vllm"
)

// Engines lists every engine in the order help text shows them.
var Engines = []Engine{EngineSGLang, EngineVLLM}

// Title is the engine's own spelling.
func (e Engine) Title() string {
	return cmp.Or(map[Engine]string{EngineSGLang: "SGLang", EngineVLLM: "vLLM"}[e], string(e))
}

// ParseEngine reads an --export-for value.
func ParseEngine(s string) (Engine, error) {
	for _, e := range Engines {
		if strings.EqualFold(s, string(e)) {
			return e, nil
		}
	}
	names := strNames(Engines)
	msg := fmt.Sprintf("--export-for %q: want one of %s", s, strings.Join(names, ", "))
	if near := nccl.Nearest(strings.ToLower(s), names); near != "" {
		msg += "; did you mean " + near + "?"
	}
	return "", fmt.Errorf("%s", msg)
}

// EngineVar is one NCCL variable an engine assigns itself at start: what
// it Does, the Flag that decides it ("" when none), and whether it
// Overrides a value the env holds (then an export points to Flag).
type EngineVar struct {
	Engine     Engine
	Name, Does string
	Flag       string
	Overrides  bool
}

// EngineVars is what each engine does with the NCCL env, read in the
// engines' sources:
//
//   - SGLang, python/sglang/srt/entrypoints/engine.py, _set_envs_and_config
//     (sgl-project/sglang at 001067fffe33, the function's first statements):
//     if "NCCL_CUMEM_ENABLE" not in os.environ or cfg.enable_symm_mem:
//     os.environ["NCCL_CUMEM_ENABLE"] = str(int(cfg.enable_symm_mem)), and
//     NCCL_NVLS_ENABLE likewise from enable_nccl_nvls or enable_symm_mem.
//     Earlier releases of the same function assigned both at every start,
//     whatever the env held: os.environ["NCCL_CUMEM_ENABLE"] =
//     str(int(server_args.enable_symm_mem)); if not
//     server_args.enable_symm_mem: os.environ["NCCL_NVLS_ENABLE"] =
//     str(int(server_args.enable_nccl_nvls)).
//   - vLLM, vllm/env_override.py lines 16-20 at v0.9.1 (PR 19105; its
//     warning is logged as env_override.py:17): if
//     os.environ.get('NCCL_CUMEM_ENABLE', '0') != '0': keep it (a warning);
//     elif not os.path.exists('/dev/nvidia-caps-imex-channels'):
//     os.environ['NCCL_CUMEM_ENABLE'] = '0'. Before v0.9.1 the file
//     assigned '0' at every start; PR 24141 (September 2025) removed the
//     assignment, and vllm/env_override.py at 017f66415766 has none.
var EngineVars = []EngineVar{
	{Engine: EngineSGLang, Name: "NCCL_CUMEM_ENABLE", Flag: "--enable-symm-mem", Overrides: true,
		Does: "SGLang sets it at engine start: 1 with --enable-symm-mem whatever the env holds (older releases also 0 without the flag)"},
	{Engine: EngineSGLang, Name: "NCCL_NVLS_ENABLE", Flag: "--enable-nccl-nvls", Overrides: true,
		Does: "SGLang sets it at engine start: 1 with --enable-nccl-nvls or --enable-symm-mem whatever the env holds (older releases also 0 without them)"},
	{Engine: EngineVLLM, Name: "NCCL_CUMEM_ENABLE",
		Does: "vLLM 0.9.1 to 0.10 sets it to 0 where the env leaves it unset (older releases whatever the env holds), while the study ran NCCL's own value: set it in the env to run what was measured"},
}

// engineVarsOf is the table's rows for e.
func engineVarsOf(e Engine) []EngineVar {
	var out []EngineVar
	for _, ev := range EngineVars {
		if ev.Engine == e {
			out = append(out, ev)
		}
	}
	return out
}

// checkEngine refuses, exported for o.Engine, a variable that engine
// assigns over the env, naming the engine's flag.
func checkEngine(b *Recommendation, o Options) error {
	if o.Engine == "" {
		return nil
	}
	for _, v := range b.Vars(o.WithBase) {
		for _, ev := range engineVarsOf(o.Engine) {
			if !ev.Overrides || ev.Name != v.Name {
				continue
			}
			from := "the recommendation"
			switch {
			case v.Base:
				from = "the lane's base env (leave out --with-base)"
			case b.KeepBaseline:
				from = "your baseline"
			}
			return fmt.Errorf("cannot export %s=%s for %s: %s, so the env does not reach the engine; use %s's %s flag instead and drop %s from %s", v.Name, v.Value, o.Engine.Title(), ev.Does, o.Engine.Title(), ev.Flag, v.Name, from)
		}
	}
	return nil
}

// engineNotes are the header lines about the engines: with o.Engine, one
// per variable it sets itself; without, one line when the env holds any.
func engineNotes(b *Recommendation, o Options) []string {
	if o.Engine != "" {
		var out []string
		for _, ev := range engineVarsOf(o.Engine) {
			line := "for " + o.Engine.Title() + ": " + ev.Name + ": " + ev.Does
			if ev.Flag != "" {
				line += "; choose it with " + ev.Flag + ", not the env"
			}
			out = append(out, line)
		}
		return out
	}
	held := map[string]bool{}
	for _, v := range b.Vars(true) {
		held[v.Name] = true
	}
	var names, engines []string
	for _, ev := range EngineVars {
		if !held[ev.Name] {
			continue
		}
		if !slices.Contains(names, ev.Name) {
			names = append(names, ev.Name)
		}
		if !slices.Contains(engines, ev.Engine.Title()) {
			engines = append(engines, ev.Engine.Title())
		}
	}
	if len(names) == 0 {
		return nil
	}
	return []string{strings.Join(names, ", ") + ": " + strings.Join(engines, " and ") + " set this themselves at start; export with --export-for " + engineList() + " to see how"}
}

func engineList() string { return strings.Join(strNames(Engines), "|") }
