package rewrite

import "errors"

// nameSection appends the "name" custom section s with the function
// indices of its function names (1), local names (2) and label names (3)
// subsections renumbered; other subsections are copied. A name section that
// does not parse is dropped: names only label stack traces, and a wrong
// name would mislead more than a missing one. (wazero's own reading of the
// module name, function names and local names ignores the subsection sizes,
// so a subsection that does not hold exactly what its id says could make
// it misread the output.) One whose counts or lengths run past its end is
// refused (errOversized) by scanNames: wazero would allocate by them. body
// is where the subsections start.
func (m *module) nameSection(out []byte, s section, body int) ([]byte, error) {
	keep := len(out)
	out, ok, err := m.names(out, s, body)
	m.events = m.events[:0]
	if err != nil {
		return nil, err
	}
	if !ok {
		m.namesDropped = true
		return out[:keep], nil
	}
	return out, nil
}

// scanNames checks the name section s, in the order wazero decodes
// sections, for counts and lengths that run past its end.
func (m *module) scanNames(s section, body int) error {
	m.scanOnly = true
	_, ok, err := m.names(nil, s, body)
	m.scanOnly = false
	m.events = m.events[:0]
	m.namesDropped = !ok
	return err
}

func (m *module) names(out []byte, s section, body int) (_ []byte, ok bool, _ error) {
	out, mark := beginSection(out, secCustom)
	out = appendName(out, "name")
	r := reader{b: m.in, pos: body, end: s.end}
	for !r.done() {
		id, _ := r.byte()
		at := r.pos
		size, err := r.u32()
		if err != nil {
			return out, false, nil
		}
		if int64(size) > int64(r.end-r.pos) {
			return out, false, oversized(at, "name subsection %d of %d bytes runs past the end", id, size)
		}
		start := r.pos
		sub := reader{b: m.in, pos: start, end: start + int(size)}
		r.pos = sub.end
		switch id {
		case 0: // module name
			_, err = sub.name()
		case 1: // function names: namemap
			err = m.nameMap(&sub, true)
		case 2, 3: // local and label names: indirect namemap by function
			err = m.indirectNameMap(&sub)
		case 7: // global names: namemap
			err = m.globalNameMap(&sub)
		default:
			sub.pos = sub.end
		}
		if errors.Is(err, errOversized) {
			return out, false, err
		}
		if err != nil || !sub.done() {
			return out, false, nil
		}
		out = append(out, id)
		if out, err = m.sized(out, start, sub.end); err != nil {
			return out, false, err
		}
	}
	out, err := endSection(out, mark)
	return out, err == nil, err
}

// sized appends in[from:to] with the recorded events applied, preceded by
// its size.
func (m *module) sized(out []byte, from, to int) ([]byte, error) {
	out = append(out, 0, 0, 0, 0, 0)
	mark := len(out)
	out = m.copyPatched(out, from, to)
	return endSection(out, mark)
}

// nameMap reads vec(index name); funcs says the indices are function
// indices to renumber.
func (m *module) nameMap(r *reader, funcs bool) error {
	n, err := r.count(2)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		pos := r.pos
		idx, err := r.u32()
		if err != nil {
			return err
		}
		if funcs && !m.scanOnly {
			if err := m.patchFunc(pos, r.pos, idx); err != nil {
				return err
			}
		}
		if _, err := r.name(); err != nil {
			return err
		}
	}
	return nil
}

// indirectNameMap reads vec(funcidx namemap).
func (m *module) indirectNameMap(r *reader) error {
	n, err := r.count(2)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		pos := r.pos
		idx, err := r.u32()
		if err != nil {
			return err
		}
		if !m.scanOnly {
			if err := m.patchFunc(pos, r.pos, idx); err != nil {
				return err
			}
		}
		if err := m.nameMap(r, false); err != nil {
			return err
		}
	}
	return nil
}

// globalNameMap reads vec(globalidx name), renumbering the indices for
// Options.Tick. An index out of range makes the subsection not parse.
func (m *module) globalNameMap(r *reader) error {
	n, err := r.count(2)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		pos := r.pos
		idx, err := r.u32()
		if err != nil {
			return err
		}
		if !m.scanOnly && m.opts.Tick {
			if idx >= m.budgetGlobal {
				return errors.New("global name of a global out of range")
			}
			m.patchGlobal(pos, r.pos, idx)
		}
		if _, err := r.name(); err != nil {
			return err
		}
	}
	return nil
}
