/* The leader-only command of wine_command.py: `ticker.exe FILE` appends "TERM MS" (TENURE_TERM
 * and the wall clock in Unix milliseconds) to FILE every 20 ms, after starting a copy of itself,
 * `ticker.exe FILE child`, that does the same to FILE.child: a descendant the command started,
 * which must end with it. */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long long now_ms(void) {
    FILETIME ft;
    ULARGE_INTEGER t;
    GetSystemTimeAsFileTime(&ft);
    t.LowPart = ft.dwLowDateTime;
    t.HighPart = ft.dwHighDateTime;
    /* 100 ns ticks since 1601 -> ms since 1970 */
    return (t.QuadPart - 116444736000000000ULL) / 10000ULL;
}

int main(int argc, char **argv) {
    char path[MAX_PATH + 16], self[MAX_PATH], line[2 * MAX_PATH + 32];
    const char *term = getenv("TENURE_TERM");
    int child = argc > 2;
    if (argc < 2) return 2;
    snprintf(path, sizeof path, "%s%s", argv[1], child ? ".child" : "");
    if (!child) {
        STARTUPINFOA si;
        PROCESS_INFORMATION pi;
        ZeroMemory(&si, sizeof si);
        si.cb = sizeof si;
        GetModuleFileNameA(NULL, self, sizeof self);
        snprintf(line, sizeof line, "\"%s\" \"%s\" child", self, argv[1]);
        if (!CreateProcessA(NULL, line, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) return 3;
    }
    for (;;) {
        FILE *f = fopen(path, "a");
        if (f) {
            fprintf(f, "%s %llu\n", term ? term : "?", now_ms());
            fclose(f);
        }
        Sleep(20);
    }
}
