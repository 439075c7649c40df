/* expect: library_violation | message: call to 'socket' */
#include <netinet/in.h>
#include <sys/socket.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(80);
    connect(s, (struct sockaddr *)&a, sizeof a);
}
