package cmd

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fsmine": func() { os.Exit(Main()) },
	})
}

// TestScript runs the end-to-end CLI scripts in cmd/testdata/script/*.txtar.
// The scripts find the repository's testdata at $TESTDATA.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") == "1",
		Setup: func(env *testscript.Env) error {
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			env.Setenv("TESTDATA", wd+"/../testdata")
			env.Setenv("NO_COLOR", "1")
			return nil
		},
	})
}
