package text

import "strings"

// Move shows a move out of a state: "from -[event]-> to", or
// "from --> to" without an event. An empty from (a step the model could
// not place) shows as "?".
func Move(from, event, to string) string {
	if from == "" {
		from = "?"
	}
	return from + " " + Arrow(event, to)
}

// Arrow shows a move without its source: "-[event]-> to", or "--> to"
// without an event.
func Arrow(event, to string) string {
	if event == "" {
		return "--> " + to
	}
	return "-[" + event + "]-> " + to
}

// Table lays rows out as columns separated by two spaces, each column as
// wide as its widest cell in runes; right lists the columns aligned right.
// Every row ends in a newline, with its trailing spaces trimmed.
func Table(rows [][]string, right map[int]bool) string {
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
