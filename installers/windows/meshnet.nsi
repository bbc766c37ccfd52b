; NSIS 3 script for MeshNet on Windows, compiled on Linux or Windows by
; `makensis` (installers/windows_package.py passes the defines):
;   makensis -DVERSION=0.1.0 -DSOURCE_DIR=<abs>/dist/meshnet
;            -DOUT_FILE=<abs>/dist/MeshNet-0.1.0-setup.exe
;            -DICON_FILE=<abs>/assets/icons/app.ico [-DCOMPRESSOR=zlib]
;            installers/windows/meshnet.nsi
;
; - Per user, with no administrator rights (RequestExecutionLevel user): the
;   program goes to %LOCALAPPDATA%\Programs\MeshNet, every registry value to HKCU.
; - A Start-menu entry; an optional desktop icon.
; - "Start MeshNet when I sign in" is an optional, unticked section (/AUTOSTART=1
;   ticks it in a silent install). It writes the HKCU Run value ("MeshNet" = the
;   quoted exe path and --hidden) that the app's Settings > Start at login writes
;   (app/autostart.py), so the two agree.
; - meshnet:// invite links open the app: HKCU\Software\Classes\meshnet.
; - A branded build carries network.json beside the app (installers/network_file.py
;   writes it into the bundle before it is packed, as for the .deb).
; - The installer refuses a folder it cannot write to, with a sentence.
; - The uninstaller removes the program, its entries and the login value, and keeps
;   the user's data (%LOCALAPPDATA%\MeshNet: models, reports, usage, logs, and the
;   app's settings, HKCU\Software\MeshNet) unless the user says yes when asked, or
;   passes /PURGE=1 to a silent uninstall. The key in Credential Manager stays, so
;   a reinstall is the same node.

; A 64-bit installer for a 64-bit program: it runs under 64-bit-only Wine, and
; its registry writes are never redirected to the 32-bit view.
Target amd64-unicode
ManifestDPIAware true
RequestExecutionLevel user

!ifndef VERSION
  !define VERSION "0.0.0"
!endif
!ifndef SOURCE_DIR
  !define SOURCE_DIR "..\..\dist\meshnet"
!endif
!ifndef OUT_FILE
  !define OUT_FILE "..\..\dist\MeshNet-${VERSION}-setup.exe"
!endif
!ifndef ICON_FILE
  !define ICON_FILE "..\..\assets\icons\app.ico"
!endif
; lzma for releases (smallest download); CI may pass zlib (much faster to pack)
!ifndef COMPRESSOR
  !define COMPRESSOR "lzma"
!endif
SetCompressor /SOLID ${COMPRESSOR}

!define APP_NAME "MeshNet"
!define APP_EXE "meshnet-app.exe"
!define NODE_EXE "meshnet-node.exe"
!define URL_SCHEME "meshnet"
!define RUN_KEY "Software\Microsoft\Windows\CurrentVersion\Run"
!define APPROVED_KEY "Software\Microsoft\Windows\CurrentVersion\Explorer\StartupApproved\Run"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\MeshNet"
!define SETTINGS_KEY "Software\MeshNet"
!define DATA_DIR "$LOCALAPPDATA\MeshNet"

!include "MUI2.nsh"
!include "FileFunc.nsh"
!include "LogicLib.nsh"
!include "Sections.nsh"
!include "x64.nsh"

Name "${APP_NAME}"
OutFile "${OUT_FILE}"
InstallDir "$LOCALAPPDATA\Programs\${APP_NAME}"
InstallDirRegKey HKCU "${UNINSTALL_KEY}" "InstallLocation"
BrandingText "${APP_NAME} ${VERSION}"
VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "${APP_NAME}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "${APP_NAME} installer"
VIAddVersionKey "LegalCopyright" "MeshNet contributors"

!define MUI_ICON "${ICON_FILE}"
!define MUI_UNICON "${ICON_FILE}"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\${APP_EXE}"

!insertmacro MUI_PAGE_WELCOME
!define MUI_PAGE_CUSTOMFUNCTION_LEAVE CheckFolder
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_COMPONENTS
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

!macro REFUSE_FOLDER
  MessageBox MB_ICONSTOP|MB_OK "MeshNet cannot write to $INSTDIR, and its node keeps \
    files beside itself as it updates. Choose a folder of your own (the suggested one \
    needs no administrator rights)." /SD IDOK
!macroend

Section "MeshNet" SEC_MAIN
  SectionIn RO
  Call FolderWritable  ; a silent install (/S /D=...) has no folder page
  ${If} $0 == 0
    !insertmacro REFUSE_FOLDER
    SetErrorLevel 5
    Quit
  ${EndIf}
  SetOutPath "$INSTDIR"
  File /r "${SOURCE_DIR}\*.*"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  CreateShortcut "$SMPROGRAMS\${APP_NAME}.lnk" "$INSTDIR\${APP_EXE}" "" "$INSTDIR\${APP_EXE}" 0 \
    SW_SHOWNORMAL "" "Lend this PC's GPU to the MeshNet network"

  ; meshnet:// invite links: `meshnet-app --join LINK`
  WriteRegStr HKCU "Software\Classes\${URL_SCHEME}" "" "URL:MeshNet invite"
  WriteRegStr HKCU "Software\Classes\${URL_SCHEME}" "URL Protocol" ""
  WriteRegStr HKCU "Software\Classes\${URL_SCHEME}\DefaultIcon" "" '"$INSTDIR\${APP_EXE}",0'
  WriteRegStr HKCU "Software\Classes\${URL_SCHEME}\shell\open\command" "" \
    '"$INSTDIR\${APP_EXE}" --join "%1"'

  ; Settings > Apps lists it, with a quiet uninstall that keeps the data
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${APP_NAME}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "MeshNet"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" '"$INSTDIR\${APP_EXE}",0'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
  ${GetSize} "$INSTDIR" "/S=0K" $1 $2 $3
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "EstimatedSize" $1
SectionEnd

Section /o "Start MeshNet when I sign in" SEC_AUTOSTART
  WriteRegStr HKCU "${RUN_KEY}" "${APP_NAME}" '"$INSTDIR\${APP_EXE}" --hidden'
  ; ticking it here overrides an earlier "off" in Task Manager, as the app does
  DeleteRegValue HKCU "${APPROVED_KEY}" "${APP_NAME}"
SectionEnd

Section /o "Desktop icon" SEC_DESKTOP
  CreateShortcut "$DESKTOP\${APP_NAME}.lnk" "$INSTDIR\${APP_EXE}"
SectionEnd

; $0: 1 when $INSTDIR takes a new file (made first if missing), else 0.
Function FolderWritable
  ClearErrors
  CreateDirectory "$INSTDIR"
  FileOpen $1 "$INSTDIR\.meshnet-write-check" w
  ${If} ${Errors}
    StrCpy $0 0
  ${Else}
    FileClose $1
    Delete "$INSTDIR\.meshnet-write-check"
    StrCpy $0 1
  ${EndIf}
FunctionEnd

Function CheckFolder
  Call FolderWritable
  ${If} $0 == 0
    !insertmacro REFUSE_FOLDER
    Abort
  ${EndIf}
FunctionEnd

Function .onInit
  ${IfNot} ${RunningX64}
    MessageBox MB_ICONSTOP|MB_OK "MeshNet needs 64-bit Windows 10 or 11." /SD IDOK
    Quit
  ${EndIf}
  ${GetParameters} $R0
  ClearErrors
  ${GetOptions} $R0 "/AUTOSTART=" $R1
  ${IfNot} ${Errors}
  ${AndIf} $R1 == "1"
    !insertmacro SelectSection ${SEC_AUTOSTART}
  ${EndIf}
FunctionEnd

Function un.PurgeAsked
  ${GetParameters} $R0
  ClearErrors
  ${GetOptions} $R0 "/PURGE=" $R1
  ${IfNot} ${Errors}
  ${AndIf} $R1 == "1"
    StrCpy $0 1
    Return
  ${EndIf}
  StrCpy $0 0
  ; silent: the default button, No, keeps the data
  MessageBox MB_YESNO|MB_ICONQUESTION|MB_DEFBUTTON2 "Also delete your MeshNet data \
    (downloaded models, reports, usage history, logs and settings) from this \
    computer?$\r$\n$\r$\nChoose No to keep it for a later install." /SD IDNO IDNO keep
  StrCpy $0 1
  keep:
FunctionEnd

Section "Uninstall"
  ; the app may have written the login value itself (Settings > Start at login)
  DeleteRegValue HKCU "${RUN_KEY}" "${APP_NAME}"
  DeleteRegValue HKCU "${APPROVED_KEY}" "${APP_NAME}"
  DeleteRegKey HKCU "Software\Classes\${URL_SCHEME}"
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
  Delete "$SMPROGRAMS\${APP_NAME}.lnk"
  Delete "$DESKTOP\${APP_NAME}.lnk"
  ; only what the installer put there: a folder chosen by hand may hold other files
  RMDir /r "$INSTDIR\_internal"
  Delete "$INSTDIR\${APP_EXE}"
  Delete "$INSTDIR\${NODE_EXE}"
  Delete "$INSTDIR\network.json"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  Call un.PurgeAsked
  ${If} $0 == 1
    RMDir /r "${DATA_DIR}"
    DeleteRegKey HKCU "${SETTINGS_KEY}"
  ${EndIf}
SectionEnd
