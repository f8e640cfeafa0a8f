/* The cuBLAS loader alone (kernels/cuda/cublas_load.h), built where nvcc
 * is and run by tests/e2e/e2e_cublas_load.sh: before cublas_load the
 * forwarders answer "not loaded", after it the libraries' own functions
 * answer (a version query needs no GPU), and the program that links it has
 * no cuBLAS among its libraries. Prints one line of what it saw; exit 1 on
 * anything else. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <stdio.h>
#include <string.h>

#include "cublas_load.h"

int main(void)
{
    char why[256] = "";
    if (cublasLtGetVersion() != 0 || cublasCreate(NULL) != CUBLAS_STATUS_NOT_INITIALIZED ||
        !strstr(cublasGetStatusName(CUBLAS_STATUS_SUCCESS), "not loaded")) {
        printf("cublas: answered before it was loaded\n");
        return 1;
    }
    if (cublas_load(why, sizeof why)) {
        printf("cublas: not loaded: %s\n", why);
        return 1;
    }
    size_t lt = cublasLtGetVersion();
    const char *name = cublasGetStatusName(CUBLAS_STATUS_SUCCESS);
    if (lt / 10000 != CUBLAS_VER_MAJOR || strcmp(name, "CUBLAS_STATUS_SUCCESS") != 0) {
        printf("cublas: loaded, but cuBLASLt says version %zu and status '%s'\n", lt, name);
        return 1;
    }
    if (cublas_load(why, sizeof why)) { /* twice: the same libraries */
        printf("cublas: a second load failed: %s\n", why);
        return 1;
    }
    printf("cublas: loaded cuBLASLt %zu\n", lt);
    return 0;
}
