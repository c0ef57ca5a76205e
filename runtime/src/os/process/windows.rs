//! Windows: the supervisor's channel is two anonymous pipes — its stdin for the orders, and one for
//! the reports whose handle the runtime duplicates into the supervisor and names in the first line
//! (its stdout and stderr stay the runtime's, for the command to inherit) — and the command's tree
//! is a Job Object with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` whose only handle the supervisor
//! holds: when the supervisor ends, however it ends, the system closes that handle and ends every
//! process in the job. The command starts suspended and is put in the job before it runs, so
//! nothing it starts escapes. The runtime's end is the orders pipe's end of file (the system
//! closes a dead process's handles); the watchdog's proof that the runtime's *process* died is a
//! handle of that process, which the system signals only once every thread has exited.
//!
//! Handles ride along with orders as the line before them, `attach process HANDLE` (a handle the
//! runtime duplicated into the supervisor) or `attach socket HEX` (the `WSAPROTOCOL_INFOW` of
//! `WSADuplicateSocketW` for the supervisor's pid, from which it makes its own socket): the
//! supervisor hands them on after the order that follows, as `SCM_RIGHTS` does on Unix.

#![allow(unsafe_code)]

use std::io::{self, BufRead, Write};
use std::os::windows::io::{
    AsHandle, AsRawHandle, AsRawSocket, FromRawHandle, FromRawSocket, OwnedHandle, OwnedSocket, RawHandle,
};
use std::os::windows::process::CommandExt;
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};

use windows_sys::Win32::Foundation::{
    DuplicateHandle, SetHandleInformation, DUPLICATE_SAME_ACCESS, HANDLE, HANDLE_FLAG_INHERIT, WAIT_OBJECT_0,
};
use windows_sys::Win32::Networking::WinSock::{
    WSADuplicateSocketW, WSASocketW, WSAStartup, FROM_PROTOCOL_INFO, INVALID_SOCKET, WSADATA, WSAPROTOCOL_INFOW,
    WSA_FLAG_NO_HANDLE_INHERIT, WSA_FLAG_OVERLAPPED,
};
use windows_sys::Win32::System::Console::{
    GenerateConsoleCtrlEvent, GetStdHandle, SetConsoleCtrlHandler, CTRL_BREAK_EVENT, STD_INPUT_HANDLE,
};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation, SetInformationJobObject,
    TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenThread, ResumeThread, WaitForSingleObject, CREATE_NEW_PROCESS_GROUP, CREATE_SUSPENDED,
    INFINITE, PROCESS_SYNCHRONIZE, THREAD_SUSPEND_RESUME,
};

pub(crate) const LEADER_COMMAND: Result<(), &str> = Ok(());
pub(crate) const DEATH_PROOF: Result<(), &str> = Ok(());

/// The exit code of a command the supervisor ended (`TerminateJobObject`): Windows has no signal to
/// report, and 1 is what `taskkill /F` leaves.
const KILLED: u32 = 1;

/// The first line on the orders pipe: `reports HANDLE`, the supervisor's handle of the reports
/// pipe (a number in the supervisor's handle table, put there by the runtime).
const REPORTS: &str = "reports ";

/// What rides along with an order, as the supervisor receives it.
pub(crate) enum Attachment {
    /// The runtime's process (the death proof).
    Process(OwnedHandle),
    /// The node's socket.
    Socket(std::net::UdpSocket),
}

/// The watchdog keeps what the runtime hands over (its process handle, its socket).
pub(crate) fn keep_received_fds() -> bool {
    true
}

/// A handle of this process that can only be waited on, to hand to the watchdog.
pub(crate) fn own_death_proof() -> io::Result<OwnedHandle> {
    let mut handle: HANDLE = std::ptr::null_mut();
    // SAFETY: the pseudo-handle of this process, duplicated into this process as a real handle.
    let ok = unsafe {
        DuplicateHandle(
            GetCurrentProcess(),
            GetCurrentProcess(),
            GetCurrentProcess(),
            &mut handle,
            PROCESS_SYNCHRONIZE,
            0,
            0,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just created, owned by no one else.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle) })
}

/// What the runtime can hand to the supervisor: the line that carries it there.
pub(crate) trait Handover {
    fn attach_line(&self, supervisor: &Supervisor) -> io::Result<String>;
}

/// The supervisor process, as the runtime's orders need it (to put handles there).
pub(crate) struct Supervisor {
    process: OwnedHandle,
    pid: u32,
}

impl Handover for OwnedHandle {
    fn attach_line(&self, supervisor: &Supervisor) -> io::Result<String> {
        let theirs = duplicate_into(self.as_raw_handle(), supervisor.process.as_raw_handle())?;
        Ok(format!("{ATTACH}process {theirs}\n"))
    }
}

impl Handover for OwnedSocket {
    fn attach_line(&self, supervisor: &Supervisor) -> io::Result<String> {
        // SAFETY: WSAPROTOCOL_INFOW is plain data, filled in by the call.
        let mut info: WSAPROTOCOL_INFOW = unsafe { std::mem::zeroed() };
        // SAFETY: a valid socket, the supervisor's pid, a structure to fill.
        if unsafe { WSADuplicateSocketW(self.as_raw_socket() as usize, supervisor.pid, &mut info) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the structure's bytes, read as bytes.
        let bytes = unsafe {
            std::slice::from_raw_parts(std::ptr::from_ref(&info).cast::<u8>(), std::mem::size_of::<WSAPROTOCOL_INFOW>())
        };
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(format!("{ATTACH}socket {hex}\n"))
    }
}

/// The prefix of a line that carries a handle for the order after it.
const ATTACH: &str = "attach ";

/// The runtime's end of the orders pipe (the supervisor's stdin). Clones share it: `close` ends
/// it for all.
#[derive(Clone)]
pub(crate) struct Orders(Arc<(Mutex<Option<ChildStdin>>, Supervisor)>);

/// The runtime's end of the reports pipe.
pub(crate) type Reports = io::PipeReader;

impl Orders {
    pub(crate) fn send(&self, bytes: &[u8]) -> io::Result<()> {
        match self.0 .0.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            Some(pipe) => pipe.write_all(bytes),
            None => Err(io::ErrorKind::BrokenPipe.into()),
        }
    }

    /// Writes `bytes` after the line that hands `attached` over. One write under the lock: no
    /// other order comes between.
    pub(crate) fn send_with(&self, bytes: &[u8], attached: &impl Handover) -> io::Result<()> {
        let mut line = attached.attach_line(&self.0 .1)?.into_bytes();
        line.extend_from_slice(bytes);
        self.send(&line)
    }

    /// Ends the orders pipe: the supervisor reads end of file, stops the command and exits, which
    /// closes the reports pipe.
    pub(crate) fn close(&self) {
        self.0 .0.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    pub(crate) fn try_clone(&self) -> io::Result<Orders> {
        Ok(self.clone())
    }
}

/// Duplicates `handle` into the process `target` (not inheritable there: the command it spawns
/// never gets it); the value it has there.
fn duplicate_into(handle: RawHandle, target: RawHandle) -> io::Result<usize> {
    let mut theirs: HANDLE = std::ptr::null_mut();
    // SAFETY: both handles are valid for the call (owned by the caller); `theirs` is written.
    let ok = unsafe { DuplicateHandle(GetCurrentProcess(), handle, target, &mut theirs, 0, 0, DUPLICATE_SAME_ACCESS) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(theirs as usize)
}

/// Starts the supervisor (`cmd`, its program and arguments set): stdin the orders pipe, the
/// reports pipe handed over in the first line, stdout and stderr inherited. In a process group of
/// its own, so that a Ctrl-C meant for the runtime's console group does not reach it (it ignores
/// Ctrl-Break itself, [`ignore_stop_requests`]).
pub(crate) fn spawn_supervisor(mut cmd: std::process::Command) -> io::Result<(Orders, Reports, Child)> {
    let (reports, writer) = io::pipe()?;
    cmd.stdin(Stdio::piped()).creation_flags(CREATE_NEW_PROCESS_GROUP);
    let mut child = cmd.spawn()?;
    let handed =
        child.stdin.take().ok_or_else(|| io::Error::other("the supervisor's stdin is not a pipe")).and_then(|stdin| {
            let theirs = duplicate_into(writer.as_raw_handle(), child.as_raw_handle())?;
            let supervisor = Supervisor { process: child.as_handle().try_clone_to_owned()?, pid: child.id() };
            let orders = Orders(Arc::new((Mutex::new(Some(stdin)), supervisor)));
            orders.send(format!("{REPORTS}{theirs}\n").as_bytes())?;
            Ok(orders)
        });
    // Ours is closed: the reports pipe ends when the supervisor does.
    drop(writer);
    match handed {
        Ok(orders) => Ok((orders, reports, child)),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(e)
        }
    }
}

/// The supervisor's end of the orders pipe.
pub(crate) struct OrderSource {
    stdin: io::Stdin,
    /// The rest of a line longer than the caller's buffer.
    pending: Vec<u8>,
}

/// The supervisor's end of the reports pipe.
pub(crate) type ReportSink = io::PipeWriter;

impl OrderSource {
    /// Reads one order line (or what fits of it) and the handles handed over just before it;
    /// `Ok((0, []))` is the end of file (a broken pipe: the runtime died).
    pub(crate) fn recv(&mut self, buf: &mut [u8]) -> io::Result<(usize, Vec<Attachment>)> {
        let mut attached = Vec::new();
        while self.pending.is_empty() {
            let mut line = Vec::new();
            match self.stdin.lock().read_until(b'\n', &mut line) {
                Ok(0) => return Ok((0, attached)),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok((0, attached)),
                Err(e) => return Err(e),
            }
            match line.strip_prefix(ATTACH.as_bytes()) {
                // A handle that cannot be taken is dropped: the order after it finds none.
                Some(rest) => attached.extend(receive(&String::from_utf8_lossy(rest))),
                None => self.pending = line,
            }
        }
        let n = self.pending.len().min(buf.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok((n, attached))
    }
}

/// The supervisor's channel: stdin, whose first line names the reports pipe's handle.
pub(crate) fn supervisor_link() -> io::Result<(OrderSource, ReportSink)> {
    // Inherited from the runtime, so inheritable: the command would inherit it too (and could
    // read the orders).
    // SAFETY: GetStdHandle returns this process's stdin handle (or an invalid value, which
    // SetHandleInformation refuses).
    unsafe {
        SetHandleInformation(GetStdHandle(STD_INPUT_HANDLE), HANDLE_FLAG_INHERIT, 0);
    }
    let stdin = io::stdin();
    let mut first = String::new();
    stdin.lock().read_line(&mut first)?;
    let value =
        first.strip_prefix(REPORTS).and_then(|v| v.trim().parse::<usize>().ok()).filter(|v| *v != 0).ok_or_else(
            || io::Error::new(io::ErrorKind::InvalidData, format!("expected `{REPORTS}HANDLE`, got {first:?}")),
        )?;
    // SAFETY: the runtime duplicated the handle into this process for us alone; nothing else
    // owns it.
    let handle = unsafe { OwnedHandle::from_raw_handle(value as RawHandle) };
    Ok((OrderSource { stdin, pending: Vec::new() }, io::PipeWriter::from(handle)))
}

/// Takes over what an `attach` line hands over: `process HANDLE` (already in this process's
/// handle table) or `socket HEX` (a socket made here from the runtime's protocol information).
fn receive(line: &str) -> Option<Attachment> {
    match line.trim_end().split_once(' ')? {
        ("process", value) => {
            let value = value.parse::<usize>().ok().filter(|v| *v != 0)?;
            // SAFETY: the runtime duplicated the handle into this process for us alone.
            Some(Attachment::Process(unsafe { OwnedHandle::from_raw_handle(value as RawHandle) }))
        }
        ("socket", hex) => {
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
                .collect::<Option<_>>()?;
            if bytes.len() != std::mem::size_of::<WSAPROTOCOL_INFOW>() {
                return None;
            }
            // SAFETY: WSAPROTOCOL_INFOW is plain data; the bytes are one, as WSADuplicateSocketW
            // wrote it in the runtime.
            let info: WSAPROTOCOL_INFOW = unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) };
            // Winsock must be started before its first call here (the standard library starts it
            // only when it makes a socket itself); the count it keeps makes a second start harmless.
            // SAFETY: WSADATA is plain data, filled in by the call.
            let mut data: WSADATA = unsafe { std::mem::zeroed() };
            // SAFETY: plain values and structures owned here.
            let raw = unsafe {
                WSAStartup(0x0202, &mut data);
                WSASocketW(
                    FROM_PROTOCOL_INFO,
                    FROM_PROTOCOL_INFO,
                    FROM_PROTOCOL_INFO,
                    &info,
                    0,
                    WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT,
                )
            };
            if raw == INVALID_SOCKET {
                return None;
            }
            // SAFETY: a socket just made, owned by no one else.
            Some(Attachment::Socket(std::net::UdpSocket::from(unsafe { OwnedSocket::from_raw_socket(raw as u64) })))
        }
        _ => None,
    }
}

/// Keeps Ctrl-C, Ctrl-Break (and, as far as Windows allows, closing the console) meant for the
/// runtime from ending the supervisor before the command: the handler says each was handled.
pub(crate) fn ignore_stop_requests() {
    unsafe extern "system" fn handled(_event: u32) -> windows_sys::core::BOOL {
        1
    }
    // SAFETY: `handled` is a valid handler for the life of the process.
    unsafe {
        SetConsoleCtrlHandler(Some(handled), 1);
    }
}

/// No subreaper on Windows: the job holds every descendant.
pub(crate) fn become_subreaper() {}

pub(crate) fn is_socket(attached: &Attachment) -> bool {
    matches!(attached, Attachment::Socket(_))
}

pub(crate) fn into_udp(attached: Attachment) -> Option<std::net::UdpSocket> {
    match attached {
        Attachment::Socket(socket) => Some(socket),
        Attachment::Process(_) => None,
    }
}

/// Calls `dead` once the process `proof` (a process handle) has ended: every thread exited.
pub(crate) fn watch_death(proof: Attachment, dead: impl FnOnce() + Send + 'static) {
    let Attachment::Process(proof) = proof else { return };
    let _ = std::thread::Builder::new().name("tenure-watch".into()).spawn(move || {
        // SAFETY: the handle is owned by this closure for the whole wait.
        if unsafe { WaitForSingleObject(proof.as_raw_handle(), INFINITE) } == WAIT_OBJECT_0 {
            dead();
        }
    });
}

/// The command and everything it started: its Job Object.
pub(crate) struct Tree {
    /// The only handle of the job: closing it (dropping this, or the supervisor's end) ends every
    /// process in it.
    job: OwnedHandle,
    /// The command's pid, which is also its console process group (for Ctrl-Break).
    pid: u32,
}

/// A new job whose processes all end when its last handle closes.
fn new_job() -> io::Result<OwnedHandle> {
    // SAFETY: no security attributes (the handle is not inheritable), no name.
    let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a handle just created, owned by no one else.
    let job = unsafe { OwnedHandle::from_raw_handle(raw) };
    // SAFETY: an all-zero limit structure is valid (no limits); only the flag is set.
    let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: the structure and its size match the information class.
    let ok = unsafe {
        SetInformationJobObject(
            job.as_raw_handle(),
            JobObjectExtendedLimitInformation,
            std::ptr::from_ref(&limits).cast(),
            std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(job)
}

/// Resumes every thread of the process `pid` (a process created suspended has one).
fn resume(pid: u32) -> io::Result<()> {
    // SAFETY: a snapshot of the system's threads; closed by the OwnedHandle.
    let raw = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if raw.is_null() || raw as isize == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a valid handle just created, owned by no one else.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(raw) };
    // SAFETY: THREADENTRY32 is plain data; dwSize is set as the API requires.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    // SAFETY: `entry` is a valid THREADENTRY32 with its size set.
    let mut more = unsafe { Thread32First(snapshot.as_raw_handle(), &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: opens the thread by id; the handle is closed by the OwnedHandle.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if !thread.is_null() {
                // SAFETY: as above.
                let thread = unsafe { OwnedHandle::from_raw_handle(thread) };
                // SAFETY: a thread handle with THREAD_SUSPEND_RESUME.
                if unsafe { ResumeThread(thread.as_raw_handle()) } != u32::MAX {
                    resumed += 1;
                }
            }
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot.as_raw_handle(), &mut entry) } != 0;
    }
    if resumed == 0 {
        return Err(io::Error::other(format!("no thread of process {pid} could be resumed")));
    }
    Ok(())
}

/// Spawns the command (`cmd`, stdin and environment set) in a new Job Object: suspended, put in
/// the job, then resumed, so that whatever it starts is in the job too. Its own console process
/// group, so that an ordered stop (Ctrl-Break) reaches it and not the supervisor.
pub(crate) fn spawn_tree(cmd: &mut std::process::Command) -> io::Result<(Child, Tree)> {
    let job = new_job()?;
    cmd.creation_flags(CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP);
    let mut child = cmd.spawn()?;
    let pid = child.id();
    // SAFETY: both handles are valid for the call.
    let placed = if unsafe { AssignProcessToJobObject(job.as_raw_handle(), child.as_raw_handle()) } == 0 {
        Err(io::Error::last_os_error())
    } else {
        resume(pid)
    };
    if let Err(e) = placed {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
    Ok((child, Tree { job, pid }))
}

impl Tree {
    /// The tree's id in reports: the command's pid.
    pub(crate) fn id(&self) -> u32 {
        self.pid
    }

    pub(crate) fn command_pid(&self) -> u32 {
        self.pid
    }

    /// An ordered stop: Ctrl-Break to the command's console process group. Without a console to
    /// send it on there is no way to ask: the job is ended at once.
    pub(crate) fn stop(&self) {
        // SAFETY: GenerateConsoleCtrlEvent takes plain values.
        if unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, self.pid) } == 0 {
            self.kill();
        }
    }

    /// Ends every process in the job.
    pub(crate) fn kill(&self) {
        // SAFETY: the job handle is valid while `self` lives.
        unsafe {
            TerminateJobObject(self.job.as_raw_handle(), KILLED);
        }
    }

    /// The command ended: whatever it left in its job goes with it.
    pub(crate) fn ended(&self) {
        self.kill();
    }
}

/// `code:N` (Windows has no signals; a killed command reports the code it was ended with).
pub(crate) fn status_text(status: ExitStatus) -> String {
    format!("code:{}", status.code().unwrap_or(-1))
}

/// What the runtime's backstop ends, for its warning (followed by the command's pid).
pub(crate) const BACKSTOP_ENDS: &str = "its supervisor, whose death ends the job of command";

/// The runtime's backstop for a supervisor that is stopped (suspended): only the supervisor holds
/// the command's job, so the runtime ends the supervisor, and the system, closing the job's last
/// handle, ends the command's tree; whether there was a supervisor to end.
pub(crate) fn end_tree(_pid: u32, supervisor: Option<&mut Child>) -> bool {
    supervisor.is_some_and(|child| child.kill().is_ok())
}

/// The backstop's last step: as [`end_tree`] (ending the supervisor ends the job).
pub(crate) fn kill_tree(pid: u32, supervisor: Option<&mut Child>) -> bool {
    end_tree(pid, supervisor)
}
