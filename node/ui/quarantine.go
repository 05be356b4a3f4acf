package ui

import (
	"net/url"
	"strconv"

	"github.com/retentionkit/retention/passes/ledger"
)

// quarantinePage is how many quarantined rows, and how many dead letters, one page
// shows: a quarantine of thousands of rows would otherwise be one page too long to read
// and too heavy to refresh every few seconds.
const quarantinePage = 50

// quarantineView is the quarantine and dead-letters page.
type quarantineView struct {
	Rows        []ledger.QuarantinedRow
	DeadLetters []ledger.DeadLetter
	RowPage     pager
	LetterPage  pager
	LedgerOff   bool
	Problems    []string
}

func (v quarantineView) problems() []string { return v.Problems }

// pager is one table's place in its pages: which rows it shows of how many, and the
// links to the pages before and after ("" at either end).
type pager struct {
	From, To, Total int
	Prev, Next      string
}

// offsetParam reads a page's offset from the query; anything but a whole number >= 0
// is the first page.
func offsetParam(q url.Values, name string) int {
	n, err := strconv.Atoi(q.Get(name))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// pageOf places a table at offset, showing shown rows of total, with links that move
// its own offset parameter and keep the other's.
func pageOf(r *request, param string, offset, shown, total int) pager {
	p := pager{From: offset + 1, To: offset + shown, Total: total}
	if shown == 0 {
		p.From = offset
	}
	link := func(to int) string {
		q := r.URL.Query()
		q.Del("fragment")
		q.Del("note")
		if to > 0 {
			q.Set(param, strconv.Itoa(to))
		} else {
			q.Del(param)
		}
		if len(q) == 0 {
			return r.base + "quarantine"
		}
		return r.base + "quarantine?" + q.Encode()
	}
	if offset > 0 {
		p.Prev = link(max(offset-quarantinePage, 0))
	}
	if offset+shown < total {
		p.Next = link(offset + quarantinePage)
	}
	return p
}

func (h *Handler) quarantinePage(r *request) (string, any) {
	v := quarantineView{LedgerOff: h.cfg.Ledger == nil}
	if v.LedgerOff {
		return "quarantine", v
	}
	var pr problems
	q := r.URL.Query()
	rowsAt, lettersAt := offsetParam(q, "rows"), offsetParam(q, "letters")
	rows, total, err := h.cfg.Ledger.QuarantinePage(r.ctx, rowsAt, quarantinePage)
	pr.add("quarantine", err, h.cfg.Redact)
	for i := range rows {
		rows[i].Error = h.cfg.Redact(rows[i].Error)
	}
	v.RowPage = pageOf(r, "rows", rowsAt, len(rows), total)
	letters, total, err := h.cfg.Ledger.DeadLetterPage(r.ctx, lettersAt, quarantinePage)
	pr.add("dead letters", err, h.cfg.Redact)
	for i := range letters {
		letters[i].Error = h.cfg.Redact(letters[i].Error)
	}
	v.LetterPage = pageOf(r, "letters", lettersAt, len(letters), total)
	v.Rows, v.DeadLetters, v.Problems = rows, letters, pr.list
	return "quarantine", v
}
