/* Build-only shim for Wine 8, never shipped: Qt6Core imports ICU's converter API
   from icuuc.dll, which Windows 10 (1903 and later) and 11 carry and Wine 8 does
   not. Here every converter is unavailable (ucnv_open fails, none is listed), so
   Qt falls back to its own UTF-8/UTF-16/Latin-1 codecs: enough to freeze and run
   the app under Wine, not a replacement for ICU. */
#include <stddef.h>

#define EXPORT __declspec(dllexport)
#define U_FILE_ACCESS_ERROR 4

EXPORT void *ucnv_open(const char *name, int *error)
{
    (void)name;
    if (error && *error <= 0) *error = U_FILE_ACCESS_ERROR;
    return NULL;
}
EXPORT void ucnv_close(void *converter) { (void)converter; }
EXPORT void ucnv_reset(void *converter) { (void)converter; }
EXPORT int ucnv_countAvailable(void) { return 0; }
EXPORT const char *ucnv_getAvailableName(int n) { (void)n; return NULL; }
EXPORT const char *ucnv_getStandardName(const char *name, const char *standard, int *error)
{
    (void)name; (void)standard; (void)error;
    return NULL;
}
EXPORT const char *ucnv_getName(const void *converter, int *error)
{
    (void)converter; (void)error;
    return NULL;
}
EXPORT signed char ucnv_getMaxCharSize(const void *converter) { (void)converter; return 1; }
EXPORT int ucnv_toUCountPending(const void *c, int *e) { (void)c; (void)e; return 0; }
EXPORT int ucnv_fromUCountPending(const void *c, int *e) { (void)c; (void)e; return 0; }
/* Never reached without a converter; present so the import table resolves. */
EXPORT void UCNV_FROM_U_CALLBACK_SUBSTITUTE(void) {}
EXPORT void UCNV_TO_U_CALLBACK_SUBSTITUTE(void) {}
EXPORT void ucnv_getToUCallBack(void) {}
EXPORT void ucnv_getFromUCallBack(void) {}
EXPORT void ucnv_setToUCallBack(void) {}
EXPORT void ucnv_setFromUCallBack(void) {}
EXPORT void ucnv_cbToUWriteUChars(void) {}
EXPORT void ucnv_cbFromUWriteUChars(void) {}
EXPORT void ucnv_toUnicode(void) {}
EXPORT void ucnv_fromUnicode(void) {}
