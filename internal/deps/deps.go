// Package deps keeps the module's pinned dependencies in go.mod until the packages that
// use them (supervisor/ and actors/ for protoactor-go, the bun drivers for passes/) land;
// `go mod tidy` would drop them otherwise, and with them the otel pins that make
// protoactor-go and bun's pgdriver compile together. It is deleted once every import
// below has a real user.
package deps

import (
	_ "github.com/asynkron/protoactor-go/actor"
	_ "github.com/sirupsen/logrus"
	_ "github.com/uptrace/bun"
	_ "github.com/uptrace/bun/dialect/pgdialect"
	_ "github.com/uptrace/bun/dialect/sqlitedialect"
	_ "github.com/uptrace/bun/driver/pgdriver"
	_ "github.com/uptrace/bun/driver/sqliteshim"
)
