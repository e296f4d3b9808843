// Package render writes an automaton.Model to an io.Writer: Graphviz DOT, SVG, PNG, Mermaid, SCXML, XState and a LangGraph skeleton.
//
// The writers of Formats have one shape, func(w io.Writer, m
// *automaton.Model, opt Options) error; each reads the model without
// changing it and is deterministic: the same model gives byte-identical
// output whatever the order of its states and transitions as read. They
// buffer their output and write it to w once, so a failed render leaves w
// untouched.
//
// DiffDOT draws two models and their automaton.Diff as one overlay. Report
// and DiffReport write a self-contained HTML page for review: the diagram
// as inline SVG and the model's (or the diff's) tables. DiffText,
// DiffMarkdown and DiffJSON write an automaton.Diff as fsmine diff prints
// it for a terminal, a pull-request comment and scripts.
package render
