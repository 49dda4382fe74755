// Package jsonobj reads the members of a JSON object with where each value
// is in its text, so that a caller can edit a document in place and keep
// the rest of it byte for byte.
package jsonobj

import (
	"bytes"
	"encoding/json"
)

// Member is one member of a JSON object: its key and where its value is
// in the object's text, [Start, End).
type Member struct {
	Key        string
	Start, End int
}

// Members lists the members of the JSON object obj in document order, a
// key written twice as often as it is written, so that a caller can edit
// the text in place and keep the rest byte for byte.
func Members(obj []byte) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out []Member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		end := int(dec.InputOffset())
		out = append(out, Member{Key: key, Start: end - len(v), End: end})
	}
	return out, nil
}
