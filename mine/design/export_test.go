package design

import "github.com/fsmine/fsmine/internal/text"

// HexUnescapeForTest is hexUnescape with SCXML's escaped runes.
func HexUnescapeForTest(s string) (string, bool) { return text.HexUnescape(s, scxmlEscaped) }
