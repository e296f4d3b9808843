// Package stages proposes label rules (see mine.Rules) that turn a log's
// node names — tool and function names — into task stages: a map of 5 to
// 12 states that a person can read.
//
// Suggest reads the statistics of a log read without rules and proposes:
//
//   - Message turns. A node whose name is a message turn (a word such as
//     msg, message, chat, turn, generation, llm; agent_msg, user_msg) and
//     does not start with a tool's verb carries no task step. A run of such
//     turns that mostly (in more than DetourShare of its runs) comes back to
//     the stage it left is proposed as a detour, else the turns are
//     dropped.
//   - Stages, by agglomerative clustering of the other nodes (complete
//     linkage on names, statistics recomputed after every merge). Two
//     groups are strong candidates when their names form a family — every
//     pair of names shares, at the start and the end, at least
//     FamilyAffinity of the longer name's words (find_user_id_by_email and
//     find_user_id_by_name_zip share 4 of 6, get_order_details and
//     get_user_details 2 of 3) — or when they occur next to each other, in
//     either order, in at least Adjacency of the visits of each (a fixed
//     chain such as O_SELECTED, O_CREATED, O_SENT, or steps done together
//     in any order). The pair with the most evidence merges first; read-only
//     and acting steps (from the verb that starts the name: get_, find_,
//     list_, search_ against cancel_, modify_, update_, book_, return_ ...)
//     are never strong candidates for one stage. Merging stops when no
//     strong candidate is left and at most MaxStages stages remain, or at
//     MinStages; Options.Stages asks for another count, reached by the same
//     order of merges, down to context (cosine similarity of the stages
//     before and after) and position when names and adjacency say nothing.
//   - Folds: a stage that follows itself in at least FoldShare of its
//     visits (get_order_details five times in a row) is folded into one
//     visit, unless its steps act: each change counts.
//   - Detours: a helper step (think, calculate) that returns to the stage
//     it left in more than DetourShare of its runs (MinDetourRuns at least)
//     becomes a detour, a self-loop on that stage. Task steps are never
//     made detours: one that comes back to where it left is work done
//     alongside, and the flow should show it.
//
// Every rule carries its reason in Why, with the numbers it rests on. The
// result is deterministic: nodes, stages and rules are ordered by name and
// position, never by map order.
package stages

import (
	"errors"
	"fmt"

	"github.com/fsmine/fsmine/mine"
)

// The thresholds of Suggest; the package comment says what each decides.
const (
	MinStages      = 5
	MaxStages      = 12
	FamilyAffinity = 0.6
	Sequence       = 0.25
	FixedOrder     = 0.75
	Adjacency      = 0.9
	FoldShare      = 0.05
	DetourShare    = 0.5
	MinDetourRuns  = 5
)

// ErrOneNode is returned for a log whose records all have the same node:
// there is nothing to group.
var ErrOneNode = errors.New("one distinct node")

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
	a := newAnalysis(lg)
	if len(a.names) == 1 {
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
