/* entry.c — the first instructions of the ward and ward-tls programs when
 * they are linked static-pie on x86-64 (the Makefile names ward_entry their
 * entry point): the pages that the start-up relocation is about to write are
 * copied in by one system call, then libc's _start runs as it always does.
 *
 * Why: a static-pie program relocates itself before main(), writing every
 * page of .data.rel.ro, .got and .data that holds a pointer: 21 pages in
 * ward, each a copy-on-write fault of its own. Where a fault costs 10–25 µs
 * (a virtual machine, see bench/README.md), that was ~0.4 ms of every ward
 * command, --help included. MADV_POPULATE_WRITE (Linux 5.14) makes the same
 * copies in one call; an older kernel refuses it and the faults happen as
 * before. Nothing else changes: the pages are private copies either way,
 * and libc makes the relocated part read-only afterwards as it did.
 *
 * It runs before anything is relocated, so it is a few instructions that
 * need nothing relocated: the linker's own symbols reached PC-relative, the
 * stack untouched, %rdx (the function the kernel hands _start for atexit)
 * kept across the call. Not in libward: only a program has an entry point. */

#ifdef __x86_64__
__asm__(".text\n"
	".globl ward_entry\n"
	".hidden ward_entry\n"
	".type ward_entry, @function\n"
	"ward_entry:\n"
	"	mov %rdx, %r9\n"
	"	lea __init_array_start(%rip), %rdi\n" /* the first relocated page */
	"	and $-4096, %rdi\n"
	"	lea _edata(%rip), %rsi\n" /* the end of .data */
	"	sub %rdi, %rsi\n"
	"	mov $23, %edx\n" /* MADV_POPULATE_WRITE */
	"	mov $28, %eax\n" /* SYS_madvise */
	"	syscall\n"
	"	mov %r9, %rdx\n"
	"	jmp _start\n"
	".size ward_entry, . - ward_entry\n");
#endif
