package text

import "strings"

// Move shows a move out of a state: "from -[event]-> to", or
// "from --> to" without an event. An empty from (a step the model could
// not place) shows as "?". Names are escaped as Cell escapes them, so that
// a newline in one cannot start a line of its own.
func Move(from, event, to string) string {
	if from == "" {
		from = "?"
	}
	return Cell(from) + " " + Arrow(event, to)
}

// Arrow shows a move without its source: "-[event]-> to", or "--> to"
// without an event. Names are escaped as Cell escapes them.
func Arrow(event, to string) string {
	if event == "" {
		return "--> " + Cell(to)
	}
	return "-[" + Cell(event) + "]-> " + Cell(to)
}

// Path shows state ids joined by sep, each escaped as Cell escapes it.
func Path(ids []string, sep string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = Cell(id)
	}
	return strings.Join(parts, sep)
}

// Table lays rows out as columns separated by two spaces, each column as
// wide as its widest cell in runes; right lists the columns aligned right.
// Every row ends in a newline, with its trailing spaces trimmed. Cells are
// escaped as Line escapes them (a newline in a name from a log would make a
// row of its own); a cell that is a name, or holds names, should have them
// escaped by Cell (Move, Arrow and Path do), which Line leaves as they are.
func Table(rows [][]string, right map[int]bool) string {
	rows = cellsEscaped(rows)
	var width []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len([]rune(cell)))
		}
	}
	var b, line strings.Builder
	for _, row := range rows {
		line.Reset()
		for i, cell := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len([]rune(cell)))
			if right[i] {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

// cellsEscaped returns a copy of rows with every cell escaped by Line.
func cellsEscaped(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for r, row := range rows {
		out[r] = make([]string, len(row))
		for i, cell := range row {
			out[r][i] = Line(cell)
		}
	}
	return out
}
