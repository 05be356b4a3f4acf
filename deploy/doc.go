// Package deploy holds the deployment examples of the retention node: the Dockerfile,
// the systemd unit, the Kubernetes manifests, the Prometheus alert rules and the Grafana
// dashboard (docs/deploy.md). It has no code of its own; its tests parse each example
// and check it against the node (the admin routes, `retention validate`, the metrics
// docs/metrics.md lists), so an example that drifts from the binary fails `go test`.
package deploy
