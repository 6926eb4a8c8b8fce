package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/export"
)

var reportTime = time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)

func renderHTML(t *testing.T, s *Study) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, s, htmlOptions(s, reportTime)); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// htmlOptions are the page's options with the study's exports, rendered
// as nccltune report renders them.
func htmlOptions(s *Study, now time.Time) HTMLOptions {
	opt := HTMLOptions{Now: now}
	rendered, err := export.RenderAll(s.Study, s.Trials, s.Launches, now)
	if err != nil {
		opt.ExportError = err.Error()
	}
	for _, r := range rendered {
		opt.Exports = append(opt.Exports, ExportText(r))
	}
	return opt
}

// htmlDoc is what a lenient parse of a page found.
type htmlDoc struct {
	ids      map[string]bool
	elements map[string]int
	// text is the page's text per section id.
	text map[string]string
	// attrs holds every attribute value, by attribute name.
	attrs map[string][]string
}

// parseHTML reads a page with encoding/xml in its lenient HTML mode
// (golang.org/x/net/html is not available): it must come through without
// an error, every element closed as HTML closes it.
func parseHTML(t *testing.T, page string) htmlDoc {
	t.Helper()
	d := htmlDoc{ids: map[string]bool{}, elements: map[string]int{}, text: map[string]string{}, attrs: map[string][]string{}}
	dec := xml.NewDecoder(strings.NewReader(page))
	dec.Strict = false
	dec.AutoClose = xml.HTMLAutoClose
	dec.Entity = xml.HTMLEntity
	section := ""
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			d.elements[tok.Name.Local]++
			for _, a := range tok.Attr {
				d.attrs[a.Name.Local] = append(d.attrs[a.Name.Local], a.Value)
				if a.Name.Local == "id" {
					d.ids[a.Value] = true
					if tok.Name.Local == "section" {
						section, depth = a.Value, 0
					}
				}
			}
			depth++
		case xml.EndElement:
			depth--
			if tok.Name.Local == "section" {
				section = ""
			}
		case xml.CharData:
			if section != "" {
				d.text[section] += string(tok)
			}
		}
	}
	if d.elements["html"] != 1 || d.elements["body"] != 1 || d.elements["head"] != 1 {
		t.Errorf("the page's skeleton: %v", d.elements)
	}
	return d
}

// checkSelfContained fails on anything a browser would fetch.
func checkSelfContained(t *testing.T, page string, d htmlDoc) {
	t.Helper()
	for _, bad := range []string{"http://", "https://", "<script", "@import", "url(", "<link", "<iframe", "<img"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("the page holds %q: it must load nothing", bad)
		}
	}
	for _, attr := range []string{"src", "href", "srcset", "action", "data"} {
		if vs := d.attrs[attr]; len(vs) > 0 {
			t.Errorf("the page has %s attributes %q: it must load nothing", attr, vs)
		}
	}
}

func TestHTMLRecommendation(t *testing.T) {
	page := renderHTML(t, recommendStudy())
	d := parseHTML(t, page)
	checkSelfContained(t, page, d)
	for _, id := range []string{"simulated", "verdict", "figures", "fig-busbw", "fig-time", "fig-speedup", "fig-landscape", "fig-convergence", "tables", "choices", "export", "fabric", "settings", "trials",
		"export-env", "export-sh", "export-docker", "export-k8s", "export-json", "export-nccl-tuner"} {
		if !d.ids[id] {
			t.Errorf("no element with id %q", id)
		}
	}
	if d.elements["svg"] != 5 || d.elements["style"] < 1 {
		t.Errorf("want five inline SVG figures and inline CSS: %v", d.elements)
	}
	if d.elements["pre"] < 5 {
		t.Errorf("%d <pre> blocks: want the recommendation in the export formats", d.elements["pre"])
	}
	for section, wants := range map[string][]string{
		"verdict": {"Set NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128", "×4.40 [4.10, 4.80]", "SIMULATED"},
		"figures": {"s3-512K-4M: all_reduce bus bandwidth by message size", "s3-512K-4M: all_reduce time by message size",
			"SIMULATED fabric (spark4)", "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128 — recommended  (6 confirmation launches, 95% CI)",
			"band 512K–4M: speedup ×4.40 [4.10, 4.80] (95% CI)", "speedup over NCCL defaults by message size", "the search's landscape", "how the search converged"},
		"tables":   {"time µs", "busbw GB/s", "8M guard", "band geomean", "(p=0.002 n=6)"},
		"choices":  {"Ring LL128, 32 channels", "Ring Simple, 8 channels", "changed"},
		"export":   {"NCCL_PROTO=^LL128", "export NCCL_MAX_NCHANNELS", "SIMULATED"},
		"fabric":   {"2.28.3", "NVIDIA GB10 (simulated)", "IB", "GPUDirect RDMA (GDR)off", "not recorded"},
		"settings": {"512K-4M; sizes 512K 1M 2M 4M; guard 8M", "NCCL_MAX_NCHANNELS: unset 2 8", "60 launches", "seed1", "sim, 4 ranks"},
		"trials":   {"baseline", "explore (recommended)", "NCCL_PROTO=LL128", "exit status 1: NCCL WARN <invalid> protocol"},
	} {
		for _, w := range wants {
			if !strings.Contains(d.text[section], w) {
				t.Errorf("section %s does not say %q; it says:\n%s", section, w, d.text[section])
			}
		}
	}
	// The trial list has every trial; the text above was unescaped by the
	// parser, so the raw page must hold it escaped.
	if n := strings.Count(page, "<tr class=\"complete") + strings.Count(page, "<tr class=\"failed"); n != 4 {
		t.Errorf("%d trial rows, want 4", n)
	}
	if strings.Contains(page, "<invalid>") || !strings.Contains(page, "&lt;invalid&gt;") {
		t.Error("a trial's reason is not HTML-escaped")
	}
}

// TestHTMLExportsWrap: the exports' header lines (some over 200
// characters) wrap in their box, on screen and in print, instead of
// running out of it.
func TestHTMLExportsWrap(t *testing.T) {
	page := renderHTML(t, recommendStudy())
	i := strings.Index(page, "pre.export {")
	if i < 0 {
		t.Fatal("no style for pre.export")
	}
	rule := page[i : i+strings.Index(page[i:], "}")]
	for _, want := range []string{"white-space: pre-wrap", "overflow-wrap: anywhere"} {
		if !strings.Contains(rule, want) {
			t.Errorf("pre.export lacks %q: %s", want, rule)
		}
	}
}

func TestHTMLEscapesEverything(t *testing.T) {
	s := recommendStudy()
	evil := `</td></tr></table><script>alert("x")</script><a href="https://example.com">`
	s.Trials[2].Reason = evil
	s.Study.Reason = evil
	s.Study.Platform.GPU = evil
	s.Study.Recommendation.Reason = evil
	page := renderHTML(t, s)
	d := parseHTML(t, page)
	// The URL is there as text; no element or attribute came of it.
	if d.elements["script"] != 0 || d.elements["a"] != 0 || len(d.attrs["href"]) != 0 || strings.Contains(page, "<script") {
		t.Errorf("hostile text became markup: elements %v, href %q", d.elements, d.attrs["href"])
	}
	if !strings.Contains(d.text["trials"], evil) || !strings.Contains(d.text["fabric"], evil) {
		t.Error("the hostile text is not shown as text")
	}
}

func TestHTMLKeepDefaultsReal(t *testing.T) {
	page := renderHTML(t, keepStudy())
	d := parseHTML(t, page)
	checkSelfContained(t, page, d)
	if d.ids["simulated"] || strings.Contains(page, "SIMULATED") {
		t.Error("a real study's report says SIMULATED")
	}
	if !strings.Contains(d.text["verdict"], "keep NCCL defaults: no significant gain") {
		t.Errorf("verdict: %s", d.text["verdict"])
	}
	for _, w := range []string{"~ (p=", "± ∞", "need ≥ 6 launches", "launch 5 of the study is far from the others"} {
		if !strings.Contains(d.text["tables"], w) {
			t.Errorf("tables do not say %q", w)
		}
	}
	if !strings.Contains(d.text["choices"], "Not recorded") {
		t.Errorf("choices: %s", d.text["choices"])
	}
}

func TestHTMLSweep(t *testing.T) {
	page := renderHTML(t, sweepStudy())
	d := parseHTML(t, page)
	checkSelfContained(t, page, d)
	if !strings.Contains(d.text["export"], "recommends nothing") {
		t.Errorf("a sweep's export section should say why there is nothing to export: %s", d.text["export"])
	}
	for _, w := range []string{"NCCL defaults", "min–max", "256M", "916.0"} {
		if !strings.Contains(d.text["tables"], w) {
			t.Errorf("the sweep's curve table does not say %q:\n%s", w, d.text["tables"])
		}
	}
}

// TestHTMLInChromium loads the report in headless Chromium (Debian's
// chromium package): the browser must build the page's DOM from the file
// alone and paint it. It runs only where chromium is on PATH.
func TestHTMLInChromium(t *testing.T) {
	t.Parallel() // a browser of its own, in a directory of its own
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not on PATH (apt-get install chromium to run this test)")
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte(renderHTML(t, sequentialStudy())), 0o644); err != nil {
		t.Fatal(err)
	}
	chromium := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "profile")}
		cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+path)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, tail(stderr.String(), 2000))
		}
		return out
	}

	dom := string(chromium("--dump-dom"))
	for _, want := range []string{`id="simulated"`, "<svg", `id="trials"`, `id="export-nccl-tuner"`, "band geomean",
		`id="why"`, "fewer launches", `id="fig-busbw"`, `id="fig-time"`, `id="fig-speedup"`, `id="fig-landscape"`, `id="fig-convergence"`,
		"4 + 7 interleaved confirmation launches", "the search's landscape", "how the search converged"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM Chromium built has no %q", want)
		}
	}
	if n := strings.Count(dom, "<svg"); n != 5 {
		t.Errorf("the DOM has %d SVG figures, want 5", n)
	}
	if n := len(regexp.MustCompile(`<table`).FindAllString(dom, -1)); n < 3 {
		t.Errorf("the DOM has %d tables, want the time, busbw and trials tables", n)
	}

	shot := filepath.Join(dir, "shot.png")
	chromium("--screenshot="+shot, "--window-size=1280,6000", "--hide-scrollbars")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() != 1280 || b.Dy() != 6000 {
		t.Errorf("screenshot %dx%d, want 1280x6000", b.Dx(), b.Dy())
	}
	var ink, banner, band int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c.R < 0xe0 || c.G < 0xe0 || c.B < 0xe0 {
				ink++
			}
			if near(c, color.RGBA{R: 0xff, G: 0xf4, B: 0xd6, A: 0xff}, 3) && y < 200 {
				banner++
			}
			if near(c, bandColor, 2) {
				band++
			}
		}
	}
	if ink < b.Dx()*b.Dy()/100 {
		t.Errorf("the screenshot is nearly blank (%d dark pixels)", ink)
	}
	if banner < 20000 {
		t.Errorf("%d pixels of the SIMULATED banner at the top of the page, want it painted", banner)
	}
	// The figures are painted, not only parsed: the searched band's
	// shading of the busbw, time and speedup figures.
	if band < 3*50000 {
		t.Errorf("%d pixels of the band's shading in the screenshot, want the three figures that shade it painted", band)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
