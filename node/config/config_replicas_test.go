package config

import (
	"strings"
	"testing"
)

const mysqlHead = `database:
  driver: mysql
  dsn: app@tcp(db:3306)/app
`

// database.replicas is taken by a driver that asks each replica for its lag, and each
// entry is checked as a DSN of that driver, with its line and its place in the list.
func TestReplicasRefused(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, want string }{
		{"on postgres", goodHead + "  replicas: [postgres://app@replica/app]\n",
			"line 4: database.replicas: the postgres driver takes no list of replicas"},
		{"on sqlite", "database:\n  driver: sqlite\n  dsn: app.db\n  replicas:\n    - r.db\n",
			"line 4: database.replicas: the sqlite driver takes no list of replicas"},
		{"empty entry", mysqlHead + "  replicas:\n    - app@tcp(r1:3306)/app\n    - ''\n",
			"line 6: database.replicas[1]: is empty: want the DSN of a replica"},
		{"a bad DSN", mysqlHead + "  replicas:\n    - app@tcp(r1:3306)/app?parseTime=maybe\n",
			"line 5: database.replicas[0]: bad database DSN"},
		{"the same twice", mysqlHead + "  replicas:\n    - app@tcp(r1:3306)/app\n    - app@tcp(r1:3306)/app\n",
			"line 6: database.replicas[1]: names the same replica as database.replicas[0]"},
		{"the source", mysqlHead + "  replicas:\n    - app@tcp(db:3306)/app\n",
			"line 5: database.replicas[0]: is database.dsn itself, the source: list its replicas"},
		{"not a list", mysqlHead + "  replicas: app@tcp(r1:3306)/app\n", "line 4: database.replicas"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErrors(t, tc.body); !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want it to contain %q", got, tc.want)
			}
		})
	}
}

func TestReplicasAccepted(t *testing.T) {
	t.Parallel()
	c, err := parseConfig([]byte(mysqlHead+"  replicas:\n    - app:${R_PASSWORD}@tcp(r1:3306)/app\n    - app@tcp(r2:3306)/app\n"),
		envOf(map[string]string{"R_PASSWORD": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.Database.Replicas; len(got) != 2 || got[0] != "app:s3cret@tcp(r1:3306)/app" {
		t.Errorf("replicas %q", got)
	}
}
