// Package stages proposes label rules (see mine.Rules) that turn a log's
// node names — tool and function names — into task stages: a map of
// MinStages to MaxStages states that a person can read. It never prints.
//
// Suggest works on a log read without rules, from these statistics of each
// distinct node: its name's words (split at punctuation, spaces and case
// changes), records, sessions, mean relative position among the task steps
// of its sessions (0 first, 1 last), and, between groups of nodes, how
// often a run of one is followed by a run of the other, which comes first
// in the sessions that have both, and what comes before and after each.
//
//   - Ids. Names that differ only in ids (runs of digits, hex words of 8
//     or more with a digit, UUIDs: tool_get_7, tool_get_12) are one node,
//     tool_get_*, whose rule matches the ids by pattern. A log with more
//     than MaxNodes distinct nodes after that gets ErrTooManyNodes.
//   - Message turns. A node whose name has a word of a message turn (msg,
//     message, chat, turn, generation, llm ...: agent_msg, user_msg) and
//     does not start with a tool's verb (send_message is a step) carries no
//     task step; nor does one that behaves as a turn whatever its name: in
//     TurnSessions of the sessions, next to TurnTouch of the other records
//     and TurnNeighbours of the other nodes (STAR's user_utter); nor free
//     text, a task node next to FreeNeighbours of the others, with no one
//     node around it dominating (FreeEntropy) and no place of its own
//     (positions spread FreeSpread; STAR's wizard_free_text). Their runs
//     are made a detour (a self-loop on the stage they interrupt) when more
//     than TurnDetourShare of them (MinDetourRuns at least) come back to
//     the stage they left; otherwise they are dropped, because a detour's
//     runs that do not come back stay in the flow as a hub (STAR trivia's
//     user_utter: 68% come back, and the third that do not, each dialogue's
//     opening among them, made a hub of the trunk's first state). A helper
//     step that misses DetourShare stays a stage of its own, not dropped:
//     it needs only half its runs to come back to be a detour.
//   - Branches. Two task nodes most of whose runs (BranchShare) follow the
//     same node, that rarely come in one session (BranchTogether) and whose
//     names are of no one family, are different outcomes of one decision
//     (a booking confirmed, nothing found); so are two of one family that
//     come in the same sessions in no fixed order but seldom between the
//     same two runs of that node (trivia's correct and incorrect replies,
//     the outcomes of a check made again and again). They are merged only
//     when a stage count asked for (Options.Stages) leaves nothing else.
//   - Failures. A node whose name says a failure (nothing, not, failed,
//     error, unavailable ...: see negations) is merged with another step
//     only on evidence (a family of names, steps always side by side) or
//     when a stage count asked for forces it, never to reach MaxStages,
//     and stages of failures do not count against MaxStages.
//   - Classes. The verb that starts a name (after its last colon, for
//     execute_tool:get_order) makes a step read-only (get, find, list,
//     search ...), acting (cancel, modify, update, book, return ...) or a
//     helper (think, calculate). A read and an act are never proposed as
//     one stage on evidence; a requested stage count merges them last.
//     Order is not used to guess a class: lookups also come last, when an
//     agent gives up.
//   - Stages, by agglomerative clustering of the task nodes: every node
//     starts as a stage, and the pair with the strongest evidence merges,
//     the statistics recomputed after every merge. The evidence is strong
//     for a name family — every pair of names shares, at its start and end,
//     at least FamilyAffinity of the longer name's words (find_user_id_by_*
//     4 of 6, get_*_details 2 of 3, where BPI's A_SUBMITTED and A_DECLINED
//     share 1 of 2) — whose members come in no fixed order; and for steps
//     that are next to each other, in either order, in at least Adjacency
//     of the runs of each (a chain such as O_SELECTED, O_CREATED, O_SENT,
//     whose order says nothing). A family comes in a fixed order when, in
//     at least MinOrderSessions sessions and at least Sequence of the
//     sessions of the rarer one, both occur and one comes first in at least
//     FixedOrder of the sessions with both: get_user_details before
//     get_product_details is two steps of the task, not one, and they stay
//     apart. By default strong merges go on while more than MinStages
//     stages remain, then any merges while more than MaxStages do: those
//     take the pair whose merge changes the fewest records: the records of
//     the smaller one, weighed by one less the evidence (the most of: the
//     family's share of words over FamilyAffinity, half of it in a fixed
//     order; the share of runs next to each other over Adjacency; half the
//     cosine similarity of what comes before and after them; all halved
//     between a read and an act). Options.Stages asks for a count: the same merges, in the
//     same order, until it is reached.
//   - Folds. A stage that follows itself in at least FoldShare of its
//     visits (get_order_details five times in a row) is folded into one
//     visit, unless it acts: each change counts.
//   - Detours. A helper step more than DetourShare of whose runs (at least
//     MinDetourRuns) come back to the stage they left is made a detour.
//     Task steps are never made detours: work done alongside a stage
//     belongs in the flow.
//
// Every stage gets a rule (a family's shared words as its pattern,
// ^find_user_id_by_ or ^get_.*_details$, when that takes in no other
// stage's node; the node names otherwise), and every rule a Why with the
// numbers it rests on. Suggest checks that the rules load and give each
// node of the log its stage. The result is deterministic: nodes are
// ordered by name, stages and rules by position, never by map order.
package stages

import (
	"errors"
	"fmt"

	"github.com/fsmine/fsmine/mine"
)

// The thresholds of Suggest; the package comment says what each decides,
// and the README why each has its value.
const (
	MinStages        = 5
	MaxStages        = 12
	FamilyAffinity   = 0.6
	Sequence         = 0.25
	FixedOrder       = 0.75
	MinOrderSessions = 5
	Adjacency        = 0.9
	FoldShare        = 0.05
	DetourShare      = 0.5
	TurnDetourShare  = 0.9
	MinDetourRuns    = 5
	// MaxNodes is the most distinct nodes (names, with the ids in names
	// folded) Suggest groups: clustering keeps a few numbers per pair.
	MaxNodes = 1000
)

// ErrOneNode is returned for a log whose records all have the same node:
// there is nothing to group.
var ErrOneNode = errors.New("one distinct node")

// ErrTooManyNodes is returned for a log with more than MaxNodes distinct
// nodes.
var ErrTooManyNodes = errors.New("too many distinct nodes")

// Options shape a suggestion.
type Options struct {
	// Stages is the number of task stages wanted; 0 lets Suggest choose
	// one between MinStages and MaxStages. A log with fewer distinct task
	// nodes gets one stage per node.
	Stages int
	// NodePath is the record field the rules match, as ReadOptions.Fields
	// maps the node ("tool.name" for --field node=tool.name); "" is "node".
	NodePath string
}

// Suggestion is a proposed rules file and what it makes of the log.
type Suggestion struct {
	// Rules are the rules in the order of the file: message turns first,
	// then the stages by position.
	Rules []Rule
	// Stages are the task stages the rules give, by mean position in the
	// sessions (then name); detours among them are marked.
	Stages []Stage
	// Chat are the nodes taken for message turns, by name.
	Chat []string
	// TaskNodes is the number of distinct nodes that are not message turns.
	TaskNodes int
	// Notes say where the suggestion could not do what was asked.
	Notes []string
}

// Rule is one proposed label rule, in the rules-file format of mine.Rules.
type Rule struct {
	Name   string            `json:"name"`
	Match  map[string]string `json:"match"`
	State  string            `json:"state,omitempty"`
	Drop   bool              `json:"drop,omitempty"`
	Fold   bool              `json:"fold,omitempty"`
	Detour bool              `json:"detour,omitempty"`
	Why    string            `json:"why"`
}

// Stage is one proposed task stage.
type Stage struct {
	Name     string   `json:"name"`
	Nodes    []string `json:"nodes"` // by name
	Class    string   `json:"class,omitempty"`
	Records  int      `json:"records"`
	Sessions int      `json:"sessions"`
	Position float64  `json:"position"` // mean of i/(n-1) over its records in sessions of n task steps
	Fold     bool     `json:"fold,omitempty"`
	Detour   bool     `json:"detour,omitempty"`
	Why      string   `json:"why"`
}

// Suggest proposes label rules for lg, which must have been read without
// rules (every visit's label is its node) and not streaming. It returns
// mine.ErrNoSessions for a log without sessions and ErrOneNode for a log
// with a single distinct node.
func Suggest(lg *mine.Log, opt Options) (*Suggestion, error) {
	if opt.Stages < 0 {
		return nil, fmt.Errorf("%d stages asked for: want 0 (choose) or more", opt.Stages)
	}
	if lg.Rules != nil && len(lg.Rules.Rules) > 0 {
		return nil, errors.New("the log was read with label rules: suggestions need it read without")
	}
	if len(lg.Sessions) == 0 {
		if lg.Streamed {
			return nil, errors.New("the log was read streaming and holds no sessions")
		}
		return nil, mine.ErrNoSessions
	}
	nodePath := opt.NodePath
	if nodePath == "" {
		nodePath = mine.FieldNode
	}
	a, err := newAnalysis(lg)
	if err != nil {
		return nil, err
	}
	if len(a.names) == 1 {
		if len(a.all) > 1 {
			return nil, fmt.Errorf("%w (%q): the %d names differ only in ids, there is nothing to group into stages", ErrOneNode, a.names[0], len(a.all))
		}
		return nil, fmt.Errorf("%w (%q): there is nothing to group into stages", ErrOneNode, a.names[0])
	}
	a.cluster(opt.Stages)
	s := a.suggestion(nodePath)
	if opt.Stages > 0 && len(s.Stages) != opt.Stages {
		s.Notes = append(s.Notes, fmt.Sprintf("%d stages asked for; the log has %d distinct task nodes, so %d stages",
			opt.Stages, a.taskNodes, len(s.Stages)))
	}
	if opt.Stages == 0 && a.taskNodes < MinStages {
		s.Notes = append(s.Notes, fmt.Sprintf("the log has %d distinct task nodes, fewer than %d: one stage each",
			a.taskNodes, MinStages))
	}
	if err := s.check(a, nodePath); err != nil {
		return nil, err
	}
	return s, nil
}
