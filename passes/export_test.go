package passes

import "time"

// PauseSlotPolls makes the head of s's line wait every between two polls, so a test can
// leave a head idle at the front of the line the way a paused member leaves it.
func PauseSlotPolls(s *AdvisorySlots, every time.Duration) { s.pollMin, s.pollMax = every, every }
