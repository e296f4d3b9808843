package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/mine/design"
)

func init() { register(newImportCmd) }

type importOptions struct {
	flow   string
	output string
	labels string
	from   string
	event  string
	quiet  bool
}

func newImportCmd(streams IO) *cobra.Command {
	opts := &importOptions{}
	c := &cobra.Command{
		Use:   "import FLOW -o DESIGN.json",
		Short: "Read a designed flow (Mermaid, SCXML, XState, LangGraph, STAR) into a model file",
		Long: `import reads a flow that people designed into an fsmine model, so that check
and serve hold logs to the design and diff compares it with the mined model:

  mermaid    a Mermaid stateDiagram-v2 (.mmd)
  scxml      a W3C SCXML document (.scxml)
  xstate     an XState machine config in JSON
  langgraph  LangGraph's graph JSON, graph.get_graph().to_json()
  star       a STAR task graph (.flow.json): node -> next node, with the
             decision words query_success / query_failure (events ok /
             empty), available / unavailable (ok) and yes / no / done

Without --from the format follows the file's extension, then its content.
fsmine's SCXML and XState exports (either --detail) read back to the model
they were written from, counts and digest included; render, import and
render again gives the same bytes. A Mermaid export with --detail full
reads back to the same Mermaid bytes but not the digest: it carries states,
moves, events and counts, not probabilities, caps or constraints (its
summary map leaves moves out and is refused).

A STAR design keeps label rules that drop the log's user turns (node
user_utter), so that check reads the dialogues as the flowchart draws them.
The query nodes (query, query_check, query_book) stand for the log's node
query:TASK, TASK being the file name before .flow.json (or the graph's
"task" when the flow has no such name; --labels can name the query).

A move is (state, event, next state), and the event is what the log's
record of the state carries. A move the flow names no event for takes
--event. --labels MAP is a JSON object from a node name of the design to
the label of the log's records it stands for, where the two differ.

diff DESIGN.json MINED.json then lists the designed moves no session took
and the moves sessions took that the design lacks; report --design sets the
design beside the mined map; check and serve hold sessions to it.

The flow must hold together: every target a node of it, a start, every node
reachable from the start and able to reach the end (no dead end, no cycle
without exit), every name of the label map a node of the flow, one next
state per state, event and next label, at most 100,000 states and as many
moves. Otherwise the error names the file and the node, and nothing is
written.

Exit status: 0 ok; 2 trouble (unreadable or bad flow or label map, bad
flags).`,
		Example: `  fsmine import ride_book.flow.json -o design.json
  fsmine check --model design.json ride_book.jsonl
  fsmine diff design.json mined.json
  fsmine import agent.mmd --labels names.json --event ok -o design.json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("import takes one flow file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.flow = args[0]
			return runImport(c.Context(), opts, streams)
		},
	}
	f := c.Flags()
	f.StringVarP(&opts.output, "output", "o", "-", "write the model to `FILE` (atomically); - is standard output")
	f.StringVar(&opts.labels, "labels", "", "label map `FILE`: a JSON object from a design's node name to the log's label")
	f.StringVar(&opts.from, "from", "", "format of the flow: "+strings.Join(design.Formats(), ", ")+" (default: by extension, then content)")
	f.StringVar(&opts.event, "event", "", "the `EVENT` of moves the flow names none for")
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "no summary on standard error")
	return c
}

func runImport(_ context.Context, opts *importOptions, streams IO) error {
	if opts.from != "" && !slices.Contains(design.Formats(), opts.from) {
		return usagef("unknown --from %q: want one of %s", opts.from, strings.Join(design.Formats(), ", "))
	}
	if !utf8.ValidString(opts.event) {
		return usagef("--event %q is not valid UTF-8", opts.event)
	}
	if err := checkOutputs([]string{opts.flow, opts.labels}, [][2]string{{"--output", opts.output}}); err != nil {
		return err
	}
	var (
		data []byte
		err  error
		path = opts.flow
	)
	if path == "-" {
		path = "standard input"
		data, err = readAtMost(streams.In, path)
	} else {
		data, err = readFileAtMost(path)
	}
	if err != nil {
		return err
	}
	dopt := design.Options{Path: path, Format: opts.from, Event: opts.event,
		Note: func(msg string) { fmt.Fprintln(streams.Err, msg) }}
	if opts.labels != "" {
		if dopt.Labels, err = readLabelMap(opts.labels); err != nil {
			return err
		}
		dopt.LabelsPath = opts.labels
	}
	m, err := design.Read(data, dopt)
	if err != nil {
		return err
	}
	m.Generator = "fsmine " + version
	m.Created = created()
	if err := writeOutput(opts.output, streams.Out, m.Write); err != nil {
		return err
	}
	if !opts.quiet {
		fmt.Fprintf(streams.Err, "design %s (%s): %d states, %d transitions, %s\n",
			path, m.Params.Design, len(m.States), len(m.Transitions), m.Digest)
	}
	return nil
}

// maxFlowBytes bounds a flow or label map import reads: designs are small,
// and /dev/zero is not one.
const maxFlowBytes = 64 << 20

func readFileAtMost(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, path)
}

func readAtMost(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFlowBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxFlowBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a designed flow", name, maxFlowBytes>>20)
	}
	return data, nil
}

// readLabelMap reads import --labels: a JSON object of name to label.
func readLabelMap(path string) (map[string]string, error) {
	raw, err := readFileAtMost(path)
	if err != nil {
		return nil, err
	}
	return design.ReadLabels(raw, path)
}
