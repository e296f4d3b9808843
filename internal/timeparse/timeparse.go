// Package timeparse reads the times of records: RFC 3339 (zone-less is
// UTC), with a fast path for the common layout, or Unix seconds or
// milliseconds. The reader of records and the importers share it.
package timeparse

import (
	"errors"
	"strconv"
	"time"
)

// Parse reads RFC 3339 (with or without fractional seconds or zone
// offset colon variants that time.RFC3339Nano accepts), or a number of Unix
// seconds or milliseconds written as a string.
func Parse(s string) (int64, error) {
	if ns, ok := RFC3339Fast(s); ok {
		return ns, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UnixNano(), nil
	}
	// Zone-less timestamps are common in agent logs; take them as UTC.
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixNano(), nil
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 {
		return UnixNumber(f), nil
	}
	return 0, errors.New("want RFC 3339 time or Unix seconds or milliseconds")
}

// UnixNumber reads a Unix time in seconds or, when it is too large to be
// seconds before the year 5000, milliseconds.
func UnixNumber(f float64) int64 {
	if f > 1e11 {
		return int64(f * 1e6)
	}
	return int64(f * 1e9)
}

// RFC3339Fast reads the common shape of RFC 3339 timestamps,
// YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM), without time.Parse's
// generality; anything else (or an invalid field) reports !ok and is left to
// time.Parse, which also has the last word on validity. The instant is
// computed as time.Date(...).UnixNano() would, from the days since the epoch
// of the proleptic Gregorian calendar.
func RFC3339Fast(s string) (int64, bool) {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	d2 := func(i int) int {
		a, b := int(s[i])-'0', int(s[i+1])-'0'
		if uint(a) > 9 || uint(b) > 9 {
			return -1
		}
		return a*10 + b
	}
	y1, y2 := d2(0), d2(2)
	month, day, hour, min, sec := d2(5), d2(8), d2(11), d2(14), d2(17)
	if y1 < 0 || y2 < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || min < 0 || min > 59 || sec < 0 || sec > 59 {
		return 0, false
	}
	year := y1*100 + y2
	if day > 28 && day > daysIn(month, year) {
		return 0, false // time.Parse says what is wrong
	}
	i := 19
	nanos := 0
	if i < len(s) && s[i] == '.' {
		i++
		digits := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if digits < 9 {
				nanos = nanos*10 + int(s[i]-'0')
			}
			digits++
			i++
		}
		if digits == 0 {
			return 0, false
		}
		for d := digits; d < 9; d++ {
			nanos *= 10
		}
	}
	offset := 0
	switch {
	case i == len(s)-1 && s[i] == 'Z':
	case i == len(s)-6 && (s[i] == '+' || s[i] == '-') && s[i+3] == ':':
		oh, om := d2(i+1), d2(i+4)
		if oh < 0 || om < 0 || oh > 23 || om > 59 {
			return 0, false
		}
		offset = (oh*60 + om) * 60
		if s[i] == '-' {
			offset = -offset
		}
	default:
		return 0, false
	}
	secs := daysSinceEpoch(year, month, day)*86400 + int64(hour*3600+min*60+sec)
	// Wrapping as UnixNano's arithmetic does for years it cannot hold.
	return secs*1e9 + int64(nanos) - int64(offset)*1e9, true
}

// daysIn is the number of days of a month (1-12) of a year.
func daysIn(month, year int) int {
	if month == 2 {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 30 + (month+month/8)%2
}

// daysSinceEpoch is the number of days from 1970-01-01 to a date of the
// proleptic Gregorian calendar (year 0 to 9999), after H. Hinnant's
// days_from_civil.
func daysSinceEpoch(year, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := (year+400)/400 - 1 // year >= -1
	yoe := year - era*400
	mp := (month + 9) % 12
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}
