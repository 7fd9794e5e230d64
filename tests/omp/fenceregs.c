/*
 * fenceregs.c - sdsmcc makes a fence of the compiled code a call of
 * sdsm_omp_fence where the compiler saw no call (tools/sdsmcc/sdsmcc-wrap),
 * so the call must keep every register, the flags and the vector state.
 * Every thread writes shared data (so that its rank has writes to publish
 * and the publish runs the C library's copies and compares, which use the
 * vector registers), then, from an asm statement, loads known values into
 * every general register the ABI lets a call clobber, into xmm0-15, sets
 * the carry flag, calls sdsm_omp_fence exactly as the rewritten code does,
 * and stores them all back; rounds with the carry clear too.  (The asm
 * statement's call is not rewritten; the program's one flush is, which
 * marks the file and so turns the publishing path on at 2 ranks and more.)
 * Prints
 * "fence keeps registers: ok" when every value came back, at every thread.
 * Built by sdsmcc only (x86-64): the call is what it checks.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N      (64 * 1024)
#define ROUNDS 50

static long data[N];

typedef struct {
    uint64_t gpr[9];   /* rax rcx rdx rsi rdi r8 r9 r10 r11 */
    uint64_t xmm[32];  /* xmm0-15, two words each */
    uint64_t flags[2]; /* carry before, carry after */
} regs_t;

static void fence_call(regs_t *in, regs_t *out)
{
#if defined(__x86_64__)
    __asm__ volatile("pushq %%rbx\n\t"
                     "pushq %[out]\n\t"
                     "movq %[in], %%rbx\n\t"
                     "movq 0(%%rbx), %%rax\n\t"
                     "movq 8(%%rbx), %%rcx\n\t"
                     "movq 16(%%rbx), %%rdx\n\t"
                     "movq 24(%%rbx), %%rsi\n\t"
                     "movq 32(%%rbx), %%rdi\n\t"
                     "movq 40(%%rbx), %%r8\n\t"
                     "movq 48(%%rbx), %%r9\n\t"
                     "movq 56(%%rbx), %%r10\n\t"
                     "movq 64(%%rbx), %%r11\n\t"
                     "movdqu 72(%%rbx), %%xmm0\n\t"
                     "movdqu 88(%%rbx), %%xmm1\n\t"
                     "movdqu 104(%%rbx), %%xmm2\n\t"
                     "movdqu 120(%%rbx), %%xmm3\n\t"
                     "movdqu 136(%%rbx), %%xmm4\n\t"
                     "movdqu 152(%%rbx), %%xmm5\n\t"
                     "movdqu 168(%%rbx), %%xmm6\n\t"
                     "movdqu 184(%%rbx), %%xmm7\n\t"
                     "movdqu 200(%%rbx), %%xmm8\n\t"
                     "movdqu 216(%%rbx), %%xmm9\n\t"
                     "movdqu 232(%%rbx), %%xmm10\n\t"
                     "movdqu 248(%%rbx), %%xmm11\n\t"
                     "movdqu 264(%%rbx), %%xmm12\n\t"
                     "movdqu 280(%%rbx), %%xmm13\n\t"
                     "movdqu 296(%%rbx), %%xmm14\n\t"
                     "movdqu 312(%%rbx), %%xmm15\n\t"
                     "btq $0, 328(%%rbx)\n\t" /* carry = bit 0 of flags[0] */
                     "call sdsm_omp_fence@PLT\n\t"
                     "movq (%%rsp), %%rbx\n\t" /* out (mov keeps the flags) */
                     "setc 336(%%rbx)\n\t"
                     "movq %%rax, 0(%%rbx)\n\t"
                     "movq %%rcx, 8(%%rbx)\n\t"
                     "movq %%rdx, 16(%%rbx)\n\t"
                     "movq %%rsi, 24(%%rbx)\n\t"
                     "movq %%rdi, 32(%%rbx)\n\t"
                     "movq %%r8, 40(%%rbx)\n\t"
                     "movq %%r9, 48(%%rbx)\n\t"
                     "movq %%r10, 56(%%rbx)\n\t"
                     "movq %%r11, 64(%%rbx)\n\t"
                     "movdqu %%xmm0, 72(%%rbx)\n\t"
                     "movdqu %%xmm1, 88(%%rbx)\n\t"
                     "movdqu %%xmm2, 104(%%rbx)\n\t"
                     "movdqu %%xmm3, 120(%%rbx)\n\t"
                     "movdqu %%xmm4, 136(%%rbx)\n\t"
                     "movdqu %%xmm5, 152(%%rbx)\n\t"
                     "movdqu %%xmm6, 168(%%rbx)\n\t"
                     "movdqu %%xmm7, 184(%%rbx)\n\t"
                     "movdqu %%xmm8, 200(%%rbx)\n\t"
                     "movdqu %%xmm9, 216(%%rbx)\n\t"
                     "movdqu %%xmm10, 232(%%rbx)\n\t"
                     "movdqu %%xmm11, 248(%%rbx)\n\t"
                     "movdqu %%xmm12, 264(%%rbx)\n\t"
                     "movdqu %%xmm13, 280(%%rbx)\n\t"
                     "movdqu %%xmm14, 296(%%rbx)\n\t"
                     "movdqu %%xmm15, 312(%%rbx)\n\t"
                     "addq $8, %%rsp\n\t"
                     "popq %%rbx\n\t"
                     :
                     : [in] "r"(in), [out] "r"(out)
                     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "xmm2",
                       "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
                       "xmm13", "xmm14", "xmm15", "memory", "cc");
#else
    memcpy(out, in, sizeof *out);
    out->flags[1] = in->flags[0] & 1;
#endif
}

int main(void)
{
    int bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        for (int r = 0; r < ROUNDS; r++) {
            for (long i = t; i < N; i += n)
                data[i] = i * 3 + r;
            if (r == 0) {
                /* (A flush of the program's own: the file gets the mark
                 * that turns the publishing call on.) */
#pragma omp flush
            }
            regs_t in, out;
            uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(t * ROUNDS + r + 1);
            for (int k = 0; k < 9; k++)
                in.gpr[k] = x ^ ((uint64_t)k << 56), x = x * 6364136223846793005ull + 1442695040888963407ull;
            for (int k = 0; k < 32; k++)
                in.xmm[k] = x ^ ((uint64_t)k << 48), x = x * 6364136223846793005ull + 1442695040888963407ull;
            in.flags[0] = (uint64_t)(r & 1);
            in.flags[1] = 0;
            memset(&out, 0, sizeof out);
            fence_call(&in, &out);
            if (memcmp(in.gpr, out.gpr, sizeof in.gpr) || memcmp(in.xmm, out.xmm, sizeof in.xmm) ||
                (out.flags[1] & 0xff) != in.flags[0])
                bad++;
        }
    }
#pragma omp parallel reduction(+ : bad)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        for (long i = t; i < N; i += n)
            bad += data[i] != i * 3 + ROUNDS - 1;
    }
    if (bad)
        printf("fence keeps registers: %d bad rounds or words\n", bad);
    else
        printf("fence keeps registers: ok\n");
    return bad != 0;
}
