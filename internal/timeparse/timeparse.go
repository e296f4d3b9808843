// Package timeparse reads the times of records: RFC 3339 (zone-less is
// UTC), with a fast path for the common layout, or Unix seconds,
// milliseconds, microseconds or nanoseconds. The reader of records and the
// importers share it. Times are kept as Unix nanoseconds in an int64, so a
// time outside 1677-09-21 to 2262-04-11 is an error, not a wrapped number.
package timeparse

import (
	"errors"
	"math"
	"strconv"
	"time"
)

// The instants an int64 of Unix nanoseconds holds.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// ErrRange is returned for a time an int64 of Unix nanoseconds cannot hold.
var ErrRange = errors.New("out of range: fsmine keeps times from 1677-09-21 to 2262-04-11")

// Parse reads RFC 3339 (with or without fractional seconds or zone
// offset colon variants that time.RFC3339Nano accepts), or a Unix time
// written as a number in text (see Number).
func Parse(s string) (int64, error) {
	if ns, ok := RFC3339Fast(s); ok {
		return ns, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return unixNano(t)
	}
	// Zone-less timestamps are common in agent logs; take them as UTC.
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return unixNano(t)
		}
	}
	if ns, err := Number(s); err == nil || errors.Is(err, ErrRange) {
		return ns, err
	}
	return 0, errors.New("want RFC 3339 time or Unix seconds, milliseconds, microseconds or nanoseconds")
}

func unixNano(t time.Time) (int64, error) {
	if t.Before(minTime) || t.After(maxTime) {
		return 0, ErrRange
	}
	return t.UnixNano(), nil
}

// Number reads a Unix time written as a number: seconds, or, when it is too
// large to be seconds before the year 5000, milliseconds, likewise
// microseconds, and from 10^17 on nanoseconds (as OpenTelemetry and
// time.time_ns() write them). An integer is read exactly; a number with a
// fraction or exponent as a float64. A negative, non-finite or
// out-of-range number is an error.
func Number(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, errors.New("a negative Unix time")
		}
		scale := unitOf(float64(n))
		if n > math.MaxInt64/scale {
			return 0, ErrRange
		}
		return n * scale, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, errors.New("want a Unix time")
	}
	if math.IsNaN(f) || f < 0 {
		return 0, errors.New("want a Unix time, not negative")
	}
	ns := f * float64(unitOf(f))
	// 2^63 is the first float64 an int64 cannot hold.
	if math.IsInf(f, 0) || ns >= math.MaxInt64 {
		return 0, ErrRange
	}
	return int64(ns), nil
}

// unitOf is the nanoseconds in one unit of a Unix time of size f.
func unitOf(f float64) int64 {
	switch {
	case f < 1e11:
		return 1e9
	case f < 1e14:
		return 1e6
	case f < 1e17:
		return 1e3
	}
	return 1
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
	secs := daysSinceEpoch(year, month, day)*86400 + int64(hour*3600+min*60+sec) - int64(offset)
	// Years an int64 of nanoseconds cannot hold are left to Parse, which
	// says they are out of range (within a second of either end too).
	if secs <= minTime.Unix() || secs >= maxTime.Unix() {
		return 0, false
	}
	return secs*1e9 + int64(nanos), true
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
