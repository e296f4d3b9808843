// Package render writes an automaton.Model to an io.Writer.
package render
