//! Windows: the supervisor's channel is two anonymous pipes — its stdin for the orders, and one for
//! the reports whose handle the runtime duplicates into the supervisor and names in the first line
//! (its stdout and stderr stay the runtime's, for the command to inherit) — and the command's tree
//! is a Job Object with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` whose only handle the supervisor
//! holds: when the supervisor ends, however it ends, the system closes that handle and ends every
//! process in the job. The command starts suspended and is put in the job before it runs, so
//! nothing it starts escapes. The runtime's death is the orders pipe's end of file (the system
//! closes a dead process's handles). No proof of the runtime's death is handed to the watchdog
//! yet, so the death notice is off.

#![allow(unsafe_code)]

use std::io::{self, BufRead, Read, Write};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::os::windows::process::CommandExt;
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};

use windows_sys::Win32::Foundation::{
    DuplicateHandle, SetHandleInformation, DUPLICATE_SAME_ACCESS, HANDLE, HANDLE_FLAG_INHERIT, WAIT_OBJECT_0,
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
    INFINITE, THREAD_SUSPEND_RESUME,
};

pub(crate) const LEADER_COMMAND: Result<(), &str> = Ok(());
pub(crate) const DEATH_PROOF: Result<(), &str> = Err(
    "this OS gives the watchdog no proof of the runtime's death yet (a process handle would be; not built): a crash fails over by the lease",
);

/// The exit code of a command the supervisor ended (`TerminateJobObject`): Windows has no signal to
/// report, and 1 is what `taskkill /F` leaves.
const KILLED: u32 = 1;

/// The first line on the orders pipe: `reports HANDLE`, the supervisor's handle of the reports
/// pipe (a number in the supervisor's handle table, put there by the runtime).
const REPORTS: &str = "reports ";

/// What rides along with an order: a handle duplicated into the supervisor. None is sent yet (no
/// death proof; the node's socket would need `WSADuplicateSocketW`).
pub(crate) type Attachment = OwnedHandle;

/// The watchdog is never armed here: nothing is handed over.
pub(crate) fn keep_received_fds() -> bool {
    false
}

pub(crate) fn own_death_proof() -> io::Result<Attachment> {
    Err(io::Error::new(io::ErrorKind::Unsupported, DEATH_PROOF.err().unwrap_or_default()))
}

/// The runtime's end of the orders pipe (the supervisor's stdin). Clones share it: `close` ends
/// it for all.
#[derive(Clone)]
pub(crate) struct Orders(Arc<Mutex<Option<ChildStdin>>>);

/// The runtime's end of the reports pipe.
pub(crate) type Reports = io::PipeReader;

impl Orders {
    pub(crate) fn send(&self, bytes: &[u8]) -> io::Result<()> {
        match self.0.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            Some(pipe) => pipe.write_all(bytes),
            None => Err(io::ErrorKind::BrokenPipe.into()),
        }
    }

    /// Handing over a handle (the death proof) or a socket (the node's) is not built: refused.
    pub(crate) fn send_with<A>(&self, _bytes: &[u8], _attached: &A) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "no handle is handed to the supervisor on Windows yet"))
    }

    /// Ends the orders pipe: the supervisor reads end of file, stops the command and exits, which
    /// closes the reports pipe.
    pub(crate) fn close(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
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
            let orders = Orders(Arc::new(Mutex::new(Some(stdin))));
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
pub(crate) struct OrderSource(io::Stdin);

/// The supervisor's end of the reports pipe.
pub(crate) type ReportSink = io::PipeWriter;

impl OrderSource {
    /// Reads what is there; `Ok((0, []))` is the end of file (a broken pipe: the runtime died).
    pub(crate) fn recv(&mut self, buf: &mut [u8]) -> io::Result<(usize, Vec<Attachment>)> {
        match self.0.lock().read(buf) {
            Ok(n) => Ok((n, Vec::new())),
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok((0, Vec::new())),
            Err(e) => Err(e),
        }
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
    Ok((OrderSource(stdin), io::PipeWriter::from(handle)))
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

pub(crate) fn is_socket(_handle: &Attachment) -> bool {
    false
}

pub(crate) fn into_udp(_handle: Attachment) -> Option<std::net::UdpSocket> {
    None
}

/// Calls `dead` once the process `proof` (a process handle) has ended.
pub(crate) fn watch_death(proof: Attachment, dead: impl FnOnce() + Send + 'static) {
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
