/*
 * bcryptprimitives.dll for Wine 8.0, which lacks it: Go 1.22 and newer
 * take their random bytes from its ProcessPrng at start-up, so without it
 * every Go program dies before main ("bcryptprimitives.dll not found").
 * This one fills the buffer from RtlGenRandom (advapi32's
 * SystemFunction036), as ProcessPrng does on Windows. Built with mingw
 * and copied into the private Wine prefix by scripts/windows.sh; a Wine
 * gap, not something Windows users need.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
