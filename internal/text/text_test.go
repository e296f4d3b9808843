package text

import "testing"

func TestText(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Count(0, "state"), "0 states"},
		{Count(1, "state"), "1 state"},
		{Count(12, "state"), "12 states"},
		{CountForm(1, "match", "matches"), "1 match"},
		{CountForm(2, "match", "matches"), "2 matches"},
		{Or(nil), ""},
		{Or([]string{"a"}), "a"},
		{Or([]string{"a", "b"}), "a or b"},
		{Or([]string{"a", "b", "c"}), "a, b or c"},
		{ShortDigest("sha256:66025c98d2a1b2c3d4e5f6"), "sha256:66025c98d2a1"},
		{ShortDigest("sha256:66025c98"), "sha256:66025c98"},
		{ShortDigest("no-colon-here-at-all"), "no-colon-here-at-all"},
		{ShortDigest(""), ""},
		{Percent(0.875), "87.5%"},
		{Percent(1), "100.0%"},
		{Percent(0), "0.0%"},
		{Percent(0.5), "50.0%"},
		{Percent(0.0004), "<0.1%"},
		{Percent(0.0005), "0.1%"},
		{Percent(0.9996), ">99.9%"},
		{Percent(0.9994), "99.9%"},
		{Duration(350), "350 ms"},
		{Duration(1234), "1.2 s"},
		{Duration(270e3), "4.5 min"},
		{Duration(7200e3), "2.0 h"},
		{Duration(3 * 86400e3), "3.0 d"},
		{Num(3), "3"},
		{Num(2.5), "2.5"},
		{Num(-4), "-4"},
		{Num(1e16), "10000000000000000.0"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if Share(1, 0) != 0 || Share(1, 4) != 0.25 {
		t.Errorf("Share: got %v and %v", Share(1, 0), Share(1, 4))
	}
}
