; Inno Setup 6 script for MeshNet on Windows: built by `python installers/build.py`
; on a machine where `iscc` exists, which passes the version, the bundle folder
; and the output folder:
;   iscc /DAppVersion=0.1.0 /DSourceDir=<abs>\dist\meshnet /DOutputDir=<abs>\dist
;        /DIconFile=<abs>\assets\icons\app.ico installers\windows\meshnet.iss
;
; - A per-user install by default (no administrator needed; the dialog offers
;   all users), a Start-menu entry, an optional desktop icon.
; - "Start MeshNet when I sign in" is an optional, unchecked task. It writes the
;   same HKCU Run value ("MeshNet" = the quoted exe path and --hidden) that the app's
;   Settings > Start at login writes (app/autostart.py), so the two agree.
; - The uninstaller removes the program and the login entry, and keeps the
;   user's data (models, reports, usage history, logs, settings) unless the user
;   says yes when asked, or passes /PURGE=1 to a silent uninstall.

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
; Defaults relative to this script's folder (ISPP's SourcePath), for a bare
; `iscc installers\windows\meshnet.iss` after the bundle is built.
#ifndef SourceDir
  #define SourceDir AddBackslash(SourcePath) + "..\..\dist\meshnet"
#endif
#ifndef OutputDir
  #define OutputDir AddBackslash(SourcePath) + "..\..\dist"
#endif
#ifndef IconFile
  #define IconFile AddBackslash(SourcePath) + "..\..\assets\icons\app.ico"
#endif

#define AppName "MeshNet"
#define AppExe "meshnet-app.exe"
#define UrlScheme "meshnet"
#define RunKey "Software\Microsoft\Windows\CurrentVersion\Run"
#define ApprovedKey "Software\Microsoft\Windows\CurrentVersion\Explorer\StartupApproved\Run"

[Setup]
; A fixed AppId: upgrades replace the previous install instead of adding a second one.
AppId={{6F1C2E0B-4D7A-4E55-9B8E-3A2D5C7E9F10}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=MeshNet
AppVerName={#AppName} {#AppVersion}
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
SourceDir={#SourceDir}
OutputDir={#OutputDir}
OutputBaseFilename=MeshNet-{#AppVersion}-setup
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}
Compression=lzma2
SolidCompression=yes
LZMANumBlockThreads=4
WizardStyle=modern
; The app (and its node) must not hold files open while they are replaced.
CloseApplications=yes
RestartApplications=no

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "autostart"; Description: "Start MeshNet when I sign in"; Flags: unchecked
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; Comment: "Lend this PC's GPU to the MeshNet network"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Registry]
; meshnet:// invite links open the app (`meshnet-app --join LINK`). HKA: the user's
; classes for a per-user install, the machine's for an all-users one.
Root: HKA; Subkey: "Software\Classes\{#UrlScheme}"; ValueType: string; ValueName: ""; ValueData: "URL:MeshNet invite"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\{#UrlScheme}"; ValueType: string; ValueName: "URL Protocol"; ValueData: ""
Root: HKA; Subkey: "Software\Classes\{#UrlScheme}\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: """{app}\{#AppExe}"",0"
Root: HKA; Subkey: "Software\Classes\{#UrlScheme}\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\{#AppExe}"" --join ""%1"""
Root: HKCU; Subkey: "{#RunKey}"; ValueType: string; ValueName: "{#AppName}"; ValueData: """{app}\{#AppExe}"" --hidden"; Tasks: autostart; Flags: uninsdeletevalue

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[Code]
{ The user's data: platformdirs' user_data_dir("meshnet", "MeshNet") (core/paths.py)
  and the app's QSettings (HKCU\Software\MeshNet). }
function UserDataDir(): String;
begin
  Result := ExpandConstant('{localappdata}\MeshNet');
end;

function PurgeAsked(): Boolean;
begin
  if ExpandConstant('{param:PURGE|0}') = '1' then
    Result := True
  else if UninstallSilent() then
    Result := False
  else
    Result := MsgBox('Also delete your MeshNet data (downloaded models, reports, usage ' +
      'history, logs and settings) from this computer?' + #13#10#13#10 +
      'Choose No to keep it for a later install.',
      mbConfirmation, MB_YESNO or MB_DEFBUTTON2) = IDYES;
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
begin
  if CurUninstallStep = usUninstall then
  begin
    { The app may have written the login entry itself (Settings > Start at login). }
    RegDeleteValue(HKEY_CURRENT_USER, '{#RunKey}', '{#AppName}');
    RegDeleteValue(HKEY_CURRENT_USER, '{#ApprovedKey}', '{#AppName}');
  end;
  if CurUninstallStep = usPostUninstall then
  begin
    if PurgeAsked() then
    begin
      DelTree(UserDataDir(), True, True, True);
      RegDeleteKeyIncludingSubkeys(HKEY_CURRENT_USER, 'Software\MeshNet');
    end;
  end;
end;
