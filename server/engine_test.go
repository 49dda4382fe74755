package server_test

import (
	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/server"
)

// The façade's engine is one a server serves.
var _ server.Engine = (*skillhost.Engine)(nil)
