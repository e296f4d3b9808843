package design

// HexUnescapeForTest is hexUnescape with SCXML's escaped runes.
func HexUnescapeForTest(s string) (string, bool) { return hexUnescape(s, scxmlEscaped) }
