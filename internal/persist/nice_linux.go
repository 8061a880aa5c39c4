package persist

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// encoderNice is the nice value of the thread a driven save encodes on.
// The encoder shares the cores with the event loop; at the same priority
// the kernel's scheduler lets it finish its time slice when the loop
// wakes, and every request in flight waits for it. At a lower priority
// the loop preempts it on waking, and the encoder runs on what the loop
// and the clients leave: a save takes longer only when the cores are
// busy.
const encoderNice = 10

// lowerEncoderPriority moves the calling goroutine to a thread of its own
// for good and lowers that thread's priority. The goroutine must not
// unlock the thread: when it exits, the runtime ends the thread with it,
// so no other goroutine ever runs at the lowered priority.
func lowerEncoderPriority() {
	runtime.LockOSThread()
	// Lowering one's own priority needs no privilege; should it fail,
	// the save goes on at the normal priority.
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), encoderNice)
}
