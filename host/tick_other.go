//go:build !linux

package host

import "errors"

// tickSupported says whether calls without a fuel limit can run with the
// tick check; elsewhere every metered call counts fuel.
const tickSupported = false

// tickThreadSupported says whether the ticker runs on a thread of its own.
const tickThreadSupported = false

type ticker struct{}

func newTicker(*uint64) (*ticker, error) { return nil, errors.ErrUnsupported }

func (*ticker) start() {}
func (*ticker) stop()  {}
func (*ticker) close() {}

func (*ticker) ownThread() bool { return false }
