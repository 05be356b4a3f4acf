package passes

// notShown stands for a DSN of a driver retention does not know: where its secrets are
// cannot be known, so none of it is shown.
const notShown = "(a DSN of an unknown database driver; not shown)"

// RedactDSNFor returns dsn fit to show, as the driver named driverName reads it (see its
// RedactDSN). A DSN of an unknown driver is not shown at all: its kind is never guessed
// from its shape.
func RedactDSNFor(driverName, dsn string) string {
	d, err := DriverNamed(driverName)
	if err != nil {
		return notShown
	}
	return d.RedactDSN(dsn)
}

// RedactTextFor removes from text every secret dsn holds, as the driver named driverName
// reads it. With an unknown driver every known driver's reading is applied, since
// removing too much from a message is harmless and too little is not.
func RedactTextFor(driverName, text, dsn string) string {
	if d, err := DriverNamed(driverName); err == nil {
		return d.RedactText(text, dsn)
	}
	for _, d := range Drivers() {
		text = d.RedactText(text, dsn)
	}
	return text
}
