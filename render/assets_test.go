package render

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReportAssetsParse checks that the page templates under assets/
// parse and define the pages and parts the code calls.
func TestReportAssetsParse(t *testing.T) {
	tmpl, err := parseReportTemplates()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"model", "diff", "head", "foot", "style", "script", "csp"} {
		if tmpl.Lookup(name) == nil {
			t.Errorf("no template %q", name)
		}
	}
	pages, err := fs.Glob(reportPages, "assets/*.html.tmpl")
	if err != nil || len(pages) != 3 {
		t.Errorf("page templates %q (%v), want page, report and diff", pages, err)
	}
}

// TestReportAssetsContained checks that the style sheet and the script
// cannot end their element or open another, and hold no template action
// (they are parsed as template text) and no comment (html/template strips
// comments, which would change the script's hash in the page's
// Content-Security-Policy).
func TestReportAssetsContained(t *testing.T) {
	breakout := regexp.MustCompile(`(?i)</?(script|style)|<!--|-->|\{\{|\}\}`)
	for name, text := range map[string]string{"report.css": reportStyle, "report.js": reportJS} {
		if m := breakout.FindString(text); m != "" {
			t.Errorf("%s holds %q", name, m)
		}
		if strings.Contains(text, "/*") {
			t.Errorf("%s holds a comment", name)
		}
	}
	if regexp.MustCompile(`(?m)^\s*//|[;{}]\s*//`).MatchString(reportJS) {
		t.Error("report.js holds a line comment")
	}
}

// TestReportAssetsVerbatim checks that a page carries the style sheet and
// the script byte for byte, the script under the hash its
// Content-Security-Policy names.
func TestReportAssetsVerbatim(t *testing.T) {
	page := report(t, loadFixture(t, "orders"), ReportOptions{})
	for _, want := range []string{
		"<style>\n" + reportStyle + "</style>",
		"<script>\n" + reportJS + "</script>",
		`<meta http-equiv="Content-Security-Policy" content="` + reportCSP + `">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %.80q...", want)
		}
	}
}

// TestReportJSParses checks report.js with node --check, when node is
// installed.
func TestReportJSParses(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	f := filepath.Join(t.TempDir(), "report.js")
	if err := os.WriteFile(f, []byte(reportJS), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--check", f).CombinedOutput(); err != nil {
		t.Errorf("node --check report.js: %v\n%s", err, out)
	}
}
