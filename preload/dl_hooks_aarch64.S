/* dlsym and dlvsym as seen by the application, for AArch64 (the x86_64 file says why these are
 * assembly: RTLD_NEXT and RTLD_DEFAULT lookups must reach glibc with the caller's return address, in
 * x30, untouched, so they leave by a tail branch). Lookups on a real handle go to
 * tbdprof_dlsym_hook / tbdprof_dlvsym_hook. x16 is the intra-procedure-call scratch register. */
    .text

    .globl dlsym
    .type dlsym, %function
    .p2align 2
dlsym:
    hint #34                            /* bti c: a landing pad where BTI is enforced, a NOP elsewhere */
    cmn x0, #1                          /* RTLD_NEXT == (void*)-1 */
    b.eq 1f
    cbnz x0, 2f                         /* a real handle; RTLD_DEFAULT == 0 falls through */
1:  adrp x16, tbdprof_real_dlsym
    ldr x16, [x16, :lo12:tbdprof_real_dlsym]
    cbz x16, 2f
    br x16
2:  b tbdprof_dlsym_hook
    .size dlsym, .-dlsym

    .globl dlvsym
    .type dlvsym, %function
    .p2align 2
dlvsym:
    hint #34
    cmn x0, #1
    b.eq 1f
    cbnz x0, 2f
1:  adrp x16, tbdprof_real_dlvsym
    ldr x16, [x16, :lo12:tbdprof_real_dlvsym]
    cbz x16, 2f
    br x16
2:  b tbdprof_dlvsym_hook
    .size dlvsym, .-dlvsym

    .section .note.GNU-stack,"",%progbits
