package passes

import (
	"context"
	"strings"
	"testing"
)

func TestOpenRefusesAnUnknownDriver(t *testing.T) {
	_, err := Open(context.Background(), "mysql", "x")
	if err == nil || !strings.Contains(err.Error(), `"mysql"`) {
		t.Fatalf("Open = %v", err)
	}
}
