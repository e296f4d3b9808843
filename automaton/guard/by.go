package guard

import "github.com/fsmine/fsmine/automaton"

import "fmt"

// byCompiled is what a compiled conditioned model adds: the compiled
// sub-maps, by value, and the name of the map that answers (see
// Decision.Map); a sub-map's value.
type byCompiled struct {
	subs    map[string]*compiled
	mapName string
	value   string
}

// compileBy compiles the sub-maps of a conditioned model m under policy p,
// which must fit each of them as it fits the shared map, with the patterns
// compiled once for the shared map.
func (c *compiled) compileBy(m *automaton.Model, p *Policy, patterns *policyPatterns) error {
	if m.By == nil {
		return nil
	}
	c.by.mapName = automaton.SharedMap
	c.by.subs = make(map[string]*compiled, len(m.By.Maps))
	for i := range m.By.Maps {
		v := m.By.Maps[i].Value
		sc, err := compileWith(m.For(v), p, patterns)
		if err != nil {
			return fmt.Errorf("by %s: the map of value %q: %w", m.By.Field, v, err)
		}
		sc.by.mapName, sc.by.value = "by:"+v, v
		c.by.subs[v] = sc
	}
	return nil
}

// setGen sets the generation of c and its sub-maps.
func (c *compiled) setGen(gen uint64) {
	c.gen = gen
	for _, sc := range c.by.subs {
		sc.gen = gen
	}
}

// forValue returns the compiled map that judges a session of value.
func (c *compiled) forValue(value string) *compiled {
	if sc, ok := c.by.subs[value]; ok {
		return sc
	}
	return c
}

// of returns the compiled map of c, the shared map in force, that judges
// session s: its sub-map, or c itself. After a Reload (a new generation)
// the session takes the sub-map of its value in c, or the shared map for
// good when c has none.
func (c *compiled) of(s *session) *compiled {
	if s.sub == nil {
		return c
	}
	if s.sub.gen != c.gen {
		s.sub = c.by.subs[s.sub.by.value]
		if s.sub == nil {
			return c
		}
	}
	return s.sub
}
