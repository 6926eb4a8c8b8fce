package main

import (
	"context"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/export"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a study's recommendation for a serving recipe: env file, shell, docker, docker compose, k8s, JSON or NCCL tuner-plugin CSV",
		ArgsUsage: "STUDY…",
		Description: `export writes what a finished search recommends, in the form a serving recipe
(SGLang, vLLM) consumes:

  env         KEY=VALUE lines for docker run --env-file (or compose env_file:)
  sh          export lines to source before python -m sglang.launch_server or vllm serve
  docker      -e KEY=VALUE flags for docker run $(nccltune export … | grep -v '^#'),
              written bare, as $(…) passes them on (it removes no quotes)
  compose     an environment: map for a docker compose service ($ written $$)
  k8s         an env: list for a Kubernetes container spec ($ written $$)
  json        one JSON document
  nccl-tuner  the CSV of NCCL's example tuner plugin (NCCL_TUNER_CONFIG_FILE):
              per size, the algorithm, protocol and channels NCCL chose with each
              band's recommendation, and its default choices elsewhere

Each file opens with comments naming the study, band, date, NCCL version,
fabric and the measured speedup with its interval, and says SIMULATED when
it is. Only settings that differ from NCCL's defaults are written; the
lane's base env only with --with-base. A study that kept NCCL's defaults
exports an empty env.

SGLang sets NCCL_CUMEM_ENABLE and NCCL_NVLS_ENABLE itself at engine start
(from --enable-symm-mem and --enable-nccl-nvls), over the env; vLLM 0.9.1 to
0.10 sets NCCL_CUMEM_ENABLE=0 where the env leaves it unset. --export-for
sglang|vllm names the engine's flags in the header and refuses (exit 2) a
variable that engine assigns over the env; without it, a header whose env
holds one says so in one line. docs/EXPORT.md has every recipe.

Environment variables are process-wide, so several studies (one per band)
give one file per band in --out DIR; nccl-tuner combines them into one
file instead (the study listed first wins where bands overlap). The
database is opened read-only.

The tuner plugin: build it from NCCL 2.30.3 or newer source, for any NCCL
from 2.28 (it exports the v6 and v5 interfaces; 2.28 and 2.29 load v5):
  git clone -b v2.30.7-1 https://github.com/NVIDIA/nccl
  cd nccl/plugins/tuner/example && gcc -Inccl -fPIC -shared -o libnccl-tuner-example.so plugin.c
Not from NCCL 2.27.5-2.29.x source: that plugin kills every rank with
SIGSEGV (exit 139, "libnccl-tuner-example.so(+0x…)" in the backtrace) at
the first call a row matches, since it indexes NCCL's cost table as
float**. NCCL 2.27 and older load only the v2-v4 interfaces, which no fixed
example plugin exports: use the env formats there. Load it with
NCCL_TUNER_PLUGIN=/path/to/libnccl-tuner-example.so and
NCCL_TUNER_CONFIG_FILE=/path/to/the.csv, and check that it took: with
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL logs "TUNER/Plugin: Using
Example (v5)" and per call "Applied config" or "No matching config found"
(one channel):
  grep -c 'Applied config' LOG; grep -c 'No matching config found' LOG
nccltune doctor --log LOG counts them per collective and size.

--indent N shifts the k8s and compose output right, ready to paste: N is
the column of the container's (service's) own keys, image: and command:.
Pasted there and parsed (a test does it):
` + indentGuideHelp(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "`FORMAT`: " + strings.Join(export.FormatNames(), ", ")},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `PATH` instead of stdout: a file, or a directory (one file per band, e.g. nccl-512K-4M.env) when it is one, ends with /, or several studies are given"},
			&cli.BoolFlag{Name: "with-base", Usage: "include the lane's base env (the settings the study held fixed)"},
			&cli.IntFlag{Name: "indent", Usage: "shift the k8s or compose output right by `N` spaces, the column of the container's image: key (8 in a Deployment, 4 in a Pod; the list below)"},
			&cli.StringFlag{Name: "export-for", Usage: "the serving `ENGINE` the env is for (" + engineNames() + "): the header names the engine's flags for the NCCL variables it sets itself, and such a variable is refused"},
			&cli.BoolFlag{Name: "json", Usage: "the same as --format json"},
		},
		Action: func(c *cli.Context) error {
			db, err := reviewDBPath(c)
			if err != nil {
				return err
			}
			return runExport(c.Context, exportOptions{cmdIO: ioOf(c, db), studies: c.Args().Slice(), format: c.String("format"),
				out: c.String("out"), withBase: c.Bool("with-base"), indent: c.Int("indent"), exportFor: c.String("export-for")})
		},
	}
}

type exportOptions struct {
	cmdIO
	studies   []string
	format    string
	out       string
	withBase  bool
	indent    int
	exportFor string // the serving engine the env is for
}

func runExport(ctx context.Context, o exportOptions) error {
	format, err := exportFormat(o)
	if err != nil {
		return err
	}
	if len(o.studies) == 0 {
		return vocab.UsageErrorf("export takes one or more STUDY (nccltune history lists them), e.g. nccltune export s3 --format env")
	}
	// Each study with its trials and launches, in one short read-only visit.
	studies, err := stored.Load(o.db, o.studies, stored.LoadOptions{Distinct: true})
	if err != nil {
		return err
	}
	var bands []*export.Recommendation
	for _, s := range studies {
		b, err := export.NewRecommendation(s.Study, s.Trials, s.Launches)
		if err != nil {
			return vocab.UsageError(err)
		}
		bands = append(bands, b)
	}
	if len(bands) > 1 && format != export.FormatTuner && o.out == "" {
		return vocab.UsageErrorf("%d studies give %d %s files, one per band, since environment variables apply to the whole process: pass --out DIR, or --format nccl-tuner to combine the bands in one file", len(bands), len(bands), format)
	}
	if o.indent < 0 || o.indent > 40 {
		return vocab.UsageErrorf("--indent %d: give the spaces to shift by, 0 to 40", o.indent)
	}
	if o.indent > 0 && format != export.FormatK8s && format != export.FormatCompose {
		return vocab.UsageErrorf("--indent shifts the k8s and compose formats; %s has no indentation", format)
	}
	var engine export.Engine
	if o.exportFor != "" {
		if engine, err = export.ParseEngine(o.exportFor); err != nil {
			return vocab.UsageError(err)
		}
		if format == export.FormatTuner {
			return vocab.UsageErrorf("--export-for %s: the nccl-tuner CSV holds no env for an engine to set; give --export-for with an env format (%s)", engine, strings.Join(envFormatNames(), ", "))
		}
	}
	docs, err := export.Render(format, bands, export.Options{WithBase: o.withBase, Indent: o.indent, Engine: engine})
	if err != nil {
		return err
	}
	if o.out == "" || o.out == "-" {
		if len(docs) > 1 {
			return vocab.UsageErrorf("%d studies give %d files, one per band: pass --out DIR rather than stdout", len(docs), len(docs))
		}
		_, err := o.stdout.Write(docs[0].Data)
		return err
	}
	return export.WriteFiles(o.out, docs, len(bands) > 1 && format != export.FormatTuner, o.stderr)
}

func engineNames() string {
	var names []string
	for _, e := range export.Engines {
		names = append(names, string(e))
	}
	return strings.Join(names, ", ")
}

// envFormatNames are the formats that write an env (all but nccl-tuner).
func envFormatNames() []string {
	return slices.DeleteFunc(export.FormatNames(), func(f string) bool { return f == string(export.FormatTuner) })
}

// indentGuideHelp is export's tested placements, one per line.
func indentGuideHelp() string {
	lines := slices.Concat(export.IndentGuide(export.FormatK8s), export.IndentGuide(export.FormatCompose))
	return "  " + strings.Join(lines, "\n  ")
}

func exportFormat(o exportOptions) (export.Format, error) {
	switch {
	case o.format == "" && o.json:
		return export.FormatJSON, nil
	case o.format == "":
		return "", vocab.UsageErrorf("export needs --format: one of %s", strings.Join(export.FormatNames(), ", "))
	}
	f, err := export.ParseFormat(o.format)
	if err != nil {
		return "", vocab.UsageError(err)
	}
	if o.json && f != export.FormatJSON {
		return "", vocab.UsageErrorf("--json and --format %s ask for different formats: pass one of them", f)
	}
	return f, nil
}
