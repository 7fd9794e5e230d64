/* empty.c - the smallest sdsm job (init + finalize), for the start-up figure. */
#include <sdsm.h>

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    sdsm_finalize();
    return 0;
}
