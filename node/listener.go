package node

import (
	"fmt"
	"net"
	"net/http"
	"time"
)

// serveAdmin serves the admin handler on the file's node.admin address, when
// Options.ServeAdmin asks for it and the file gives one; Close shuts the server. A port
// the node cannot listen on is a ConfigError: the file names it.
func (n *Node) serveAdmin() error {
	if !n.opts.ServeAdmin || n.cfg.Node.Admin == "" {
		return nil
	}
	ln, err := net.Listen("tcp", n.cfg.Node.Admin)
	if err != nil {
		return badConfig(fmt.Errorf("node.admin: %w", err))
	}
	srv := &http.Server{Handler: n.admin, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	n.undo.push(func() {
		_ = srv.Close()
		<-served
	})
	n.adminAddr = ln.Addr().String()
	n.log.WithField("addr", n.adminAddr).Info("admin endpoint listening")
	return nil
}

// AdminAddr is the address the admin listener is bound to (the file's node.admin with
// a port 0 resolved), or "" when the node serves none.
func (n *Node) AdminAddr() string { return n.adminAddr }
