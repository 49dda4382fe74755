//go:build !linux || !(amd64 || arm64)

package host

import "errors"

// mappedSupported says whether linear memory can be backed by a mapping of
// a snapshot image; elsewhere restores copy the snapshot.
const mappedSupported = false

type memImage struct{ size int }

func newMemImage([]byte) (*memImage, error) { return nil, errors.ErrUnsupported }

func (*memImage) readInto([]byte) error { return errors.ErrUnsupported }

type mappedMemory struct {
	capMemory
	img *memImage
}

func newMappedMemory(*capAllocator, uint64) *mappedMemory { return nil }

func (*mappedMemory) bind(*memImage) error { return errors.ErrUnsupported }

func (*mappedMemory) reset() error { return errors.ErrUnsupported }
