/* Wine test bed only, never shipped: Rust's standard library reads its random bytes from
 * ProcessPrng in bcryptprimitives.dll, which Windows 10 and later have and Wine 8 does not, so a
 * Rust program there exits before main. This stand-in answers from advapi32's RtlGenRandom
 * (exported as SystemFunction036), which Wine has. wine_command.py builds it with mingw-w64 and
 * puts it next to tenure.exe. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE out, SIZE_T length) {
    while (length > 0) {
        ULONG part = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(out, part)) return FALSE;
        out += part;
        length -= part;
    }
    return TRUE;
}
