/* A stand-in for Windows' bcryptprimitives.dll, for running tenure.exe under Wine only (never
 * shipped). Rust's standard library takes its random bytes from ProcessPrng in that DLL, which
 * every Windows 10 has and Wine 8 lacks; without it the program exits before main. This one
 * answers from RtlGenRandom (advapi32's SystemFunction036), which Wine has.
 * test_wine.py builds it with mingw-w64 next to tenure.exe. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
