package ui

import "github.com/retentionkit/retention/passes/ledger"

// quarantineView is the quarantine and dead-letters page.
type quarantineView struct {
	Rows        []ledger.QuarantinedRow
	DeadLetters []ledger.DeadLetter
	LedgerOff   bool
	Problems    []string
}

func (v quarantineView) problems() []string { return v.Problems }

func (h *Handler) quarantinePage(r *request) (string, any) {
	v := quarantineView{LedgerOff: h.cfg.Ledger == nil}
	if v.LedgerOff {
		return "quarantine", v
	}
	var pr problems
	rows, err := h.cfg.Ledger.QuarantinedRows(r.ctx, "")
	pr.add("quarantine", err, h.cfg.Redact)
	for i := range rows {
		rows[i].Error = h.cfg.Redact(rows[i].Error)
	}
	letters, err := h.cfg.Ledger.DeadLetters(r.ctx)
	pr.add("dead letters", err, h.cfg.Redact)
	for i := range letters {
		letters[i].Error = h.cfg.Redact(letters[i].Error)
	}
	v.Rows, v.DeadLetters, v.Problems = rows, letters, pr.list
	return "quarantine", v
}
