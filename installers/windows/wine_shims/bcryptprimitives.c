/* Build-only shim for Wine 8, never shipped: Rust's standard library (tokenizers,
   safetensors, llguidance) imports ProcessPrng from bcryptprimitives.dll, which
   Windows 10 and 11 export and Wine 8 does not. RtlGenRandom (advapi32's
   SystemFunction036) gives the same bytes. installers/windows_cross.py builds it
   with mingw into the build's Wine prefix only. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
