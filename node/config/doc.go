// Package config reads the node's YAML configuration file and turns it into what the
// runtime takes: database settings, one passes.Options and passes.TableSpec per table
// pass, and the node's own settings (admin address, limits, readiness threshold).
//
// It lives outside package main so that a service embedding the runtime can read the
// same file format, with the same checks (every problem at once, each naming the pass,
// the field and its line), instead of copying the loader. It never opens a database:
// opening one and building the tables is passes.Open and passes.NewTable, so bun stays
// in passes/ and in the command.
package config
