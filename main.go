// Command fsmine mines agent trajectory logs into a reviewable, versioned
// state machine. See README.md.
package main

import (
	"os"

	"github.com/fsmine/fsmine/cmd"
)

func main() { os.Exit(cmd.Main()) }
