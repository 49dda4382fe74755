#include "textflag.h"

// func cloneTicker(stack uintptr, fd int, flag *uint64, stop *uint32, ctid *uint32, gen uint64) (tid int, errno int)
//
// Starts the ticker thread (see tickThread): a thread of the process that
// runs no Go code, made with clone(2) as the Go runtime makes its own
// threads, with every signal blocked (set on this thread around the clone,
// which the new thread inherits), so that no Go signal handler ever runs
// on it. The new thread loops, using registers only: write the generation
// (gen, then one more each time, with bit 63 set) into *flag, block in
// read(2) on fd with flag as the buffer, and exit when *stop is set or the
// read fails. The kernel clears *ctid when it has exited.
TEXT ·cloneTicker(SB),NOSPLIT,$16-64
	// Block every signal on this thread; keep the old mask at 8(SP).
	MOVQ	$-1, AX
	MOVQ	AX, 0(SP)
	MOVQ	$2, DI		// SIG_SETMASK
	LEAQ	0(SP), SI
	LEAQ	8(SP), DX
	MOVQ	$8, R10
	MOVQ	$14, AX		// rt_sigprocmask
	SYSCALL

	MOVQ	fd+8(FP), R12
	MOVQ	flag+16(FP), R13
	MOVQ	stop+24(FP), R14
	MOVQ	gen+40(FP), R15
	// CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_CHILD_CLEARTID
	MOVQ	$0x250f00, DI
	MOVQ	stack+0(FP), SI
	MOVQ	$0, DX
	MOVQ	ctid+32(FP), R10
	MOVQ	$0, R8
	MOVQ	$56, AX		// clone
	SYSCALL
	CMPQ	AX, $0
	JEQ	child

	// The calling thread: restore its signal mask.
	MOVQ	AX, BX
	MOVQ	$2, DI
	LEAQ	8(SP), SI
	MOVQ	$0, DX
	MOVQ	$8, R10
	MOVQ	$14, AX
	SYSCALL
	CMPQ	BX, $-4095
	JCS	ok
	NEGQ	BX
	MOVQ	$-1, tid+48(FP)
	MOVQ	BX, errno+56(FP)
	RET
ok:
	MOVQ	BX, tid+48(FP)
	MOVQ	$0, errno+56(FP)
	RET

child:
	// The ticker thread: no stack, no Go runtime.
	MOVQ	R15, AX
	BTSQ	$63, AX
	MOVQ	AX, 0(R13)
	MOVQ	R12, DI
	MOVQ	R13, SI
	MOVQ	$8, DX
	MOVQ	$0, AX		// read
	SYSCALL
	MOVQ	AX, BX
	MOVL	0(R14), AX
	TESTL	AX, AX
	JNE	exit
	CMPQ	BX, $-4095
	JCC	exit		// the read failed
	INCQ	R15
	JMP	child
exit:
	// A count for good: guests still running call the host at every
	// check, which stops them at their deadlines.
	MOVQ	$1, 0(R13)
	MOVQ	$0, DI
	MOVQ	$60, AX		// exit (this thread only)
	SYSCALL
	JMP	exit
