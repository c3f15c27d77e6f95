/* dlsym and dlvsym as seen by the application. glibc resolves RTLD_NEXT (and the scope of
 * RTLD_DEFAULT) from its caller's return address, so those lookups must reach the real function with
 * the caller's return address intact: a tail jump, which C++ cannot promise. Lookups on a real
 * handle go to tbdprof_dlsym_hook / tbdprof_dlvsym_hook, which may swap the result for a wrapper. */
    .text

    .globl dlsym
    .type dlsym, @function
dlsym:
    .byte 0xf3, 0x0f, 0x1e, 0xfa        /* endbr64 */
    cmpq $-1, %rdi                      /* RTLD_NEXT */
    je 1f
    testq %rdi, %rdi                    /* RTLD_DEFAULT */
    jne 2f
1:  movq tbdprof_real_dlsym(%rip), %rax
    testq %rax, %rax
    jz 2f
    jmp *%rax
2:  jmp tbdprof_dlsym_hook
    .size dlsym, .-dlsym

    .globl dlvsym
    .type dlvsym, @function
dlvsym:
    .byte 0xf3, 0x0f, 0x1e, 0xfa
    cmpq $-1, %rdi
    je 1f
    testq %rdi, %rdi
    jne 2f
1:  movq tbdprof_real_dlvsym(%rip), %rax
    testq %rax, %rax
    jz 2f
    jmp *%rax
2:  jmp tbdprof_dlvsym_hook
    .size dlvsym, .-dlvsym

    .section .note.GNU-stack,"",@progbits
