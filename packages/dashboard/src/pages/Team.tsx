/**
 * The Team page: members and their roles, invitations by link (the link shown once), role changes,
 * removal, the single sign-on domains, and the audit log. Admins manage everyone but owners; owners manage everyone.
 */
import type { Invitation, Member, Role, SsoDomainRole } from "@tracebridge/api/DashboardApi"
import { useState } from "react"
import type { Session } from "../Client.js"
import { call } from "../Client.js"
import { Confirm, CopyButton, ErrorText, formatTime, Notice, Page, Table, useLoad } from "../Ui.js"

const roles: ReadonlyArray<typeof Role.Type> = ["owner", "admin", "developer", "viewer"]

const RoleChange = (
  { member, onChanged, rolesFor }: {
    readonly member: typeof Member.Type
    readonly rolesFor: ReadonlyArray<typeof Role.Type>
    readonly onChanged: (m: typeof Member.Type) => void
  }
) => {
  const [role, setRole] = useState(member.role)
  const [error, setError] = useState<unknown>()
  const id = `role-${member.user_id}`
  return (
    <form
      className="inline-form"
      aria-label={`Role of ${member.email}`}
      onSubmit={(event) => {
        event.preventDefault()
        setError(undefined)
        call((c) => c.team.changeRole({ path: { user_id: member.user_id }, payload: { role } })).then(
          onChanged,
          setError
        )
      }}
    >
      <label htmlFor={id} className="visually-hidden">Role of {member.email}</label>
      <select id={id} value={role} onChange={(e) => setRole(e.target.value as typeof Role.Type)}>
        {rolesFor.map((r) => <option key={r} value={r}>{r}</option>)}
      </select>
      <button type="submit" disabled={role === member.role}>Change role</button>
      <ErrorText error={error} />
    </form>
  )
}

const Invite = ({ inviteRoles }: { readonly inviteRoles: ReadonlyArray<typeof Role.Type> }) => {
  const [email, setEmail] = useState("")
  const [role, setRole] = useState<typeof Role.Type>("developer")
  const [made, setMade] = useState<typeof Invitation.Type | undefined>()
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  return (
    <section aria-labelledby="invite-heading">
      <h2 id="invite-heading">Invite a member</h2>
      <form
        className="form row"
        onSubmit={(event) => {
          event.preventDefault()
          setBusy(true)
          setError(undefined)
          call((c) => c.team.invite({ payload: { email: email.trim(), role } })).then((invitation) => {
            setBusy(false)
            setMade(invitation)
            setEmail("")
          }, (e) => {
            setBusy(false)
            setError(e)
          })
        }}
      >
        <div className="field">
          <label htmlFor="invite-email">E-mail</label>
          <input id="invite-email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="invite-role">Role</label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value as typeof Role.Type)}>
            {inviteRoles.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </div>
        <button type="submit" className="primary" disabled={busy}>Make invitation link</button>
      </form>
      <ErrorText error={error} />
      {made !== undefined && (
        <div className="reveal" role="region" aria-label="Invitation link">
          <p>
            Send this link to {made.email ?? "the new member"} ({made.role}). It works once, until{" "}
            {formatTime(made.expires_at)}, and is shown only now.
          </p>
          <p>
            <code id="invitation-link">{made.link}</code>
          </p>
          <p className="actions">
            <CopyButton text={made.link} label="Copy link" />
            <button type="button" onClick={() => setMade(undefined)}>Done</button>
          </p>
        </div>
      )}
    </section>
  )
}

const domainRoles: ReadonlyArray<typeof SsoDomainRole.Type> = ["developer", "viewer", "admin"]

/** The e-mail domains whose verified addresses join by single sign-on (admins and owners change them). */
const SsoDomains = ({ canManage }: { readonly canManage: boolean }) => {
  const domains = useLoad(() => call((c) => c.team.ssoDomains()), [])
  const [domain, setDomain] = useState("")
  const [role, setRole] = useState<typeof SsoDomainRole.Type>("developer")
  const [error, setError] = useState<unknown>()
  const [notice, setNotice] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  return (
    <section aria-labelledby="sso-heading">
      <h2 id="sso-heading">Single sign-on domains</h2>
      <p className="muted">
        Whoever signs in with SSO with a verified e-mail of one of these domains joins this organisation with its role.
      </p>
      {notice !== undefined && <Notice>{notice}</Notice>}
      <ErrorText error={error ?? domains.error} />
      {domains.data !== undefined && (domains.data.data.length === 0 ?
        <p>No domain yet.</p> :
        (
          <Table label="Single sign-on domains">
            <thead>
              <tr>
                <th scope="col">Domain</th>
                <th scope="col">Role</th>
                <th scope="col">Added</th>
                {canManage && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {domains.data.data.map((d) => (
                <tr key={d.domain}>
                  <td>{d.domain}</td>
                  <td>{d.role}</td>
                  <td>{formatTime(d.created_at)}</td>
                  {canManage && (
                    <td className="row-actions">
                      <Confirm
                        label={`Remove ${d.domain}`}
                        question={`Stop letting ${d.domain} join by SSO? Its members stay.`}
                        confirmLabel="Yes, remove"
                        onConfirm={() => {
                          setError(undefined)
                          call((c) => c.team.removeSsoDomain({ path: { domain: d.domain } })).then(() => {
                            setNotice(`${d.domain} was removed.`)
                            domains.reload()
                          }, setError)
                        }}
                      />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </Table>
        ))}
      {canManage && (
        <form
          className="form row"
          onSubmit={(event) => {
            event.preventDefault()
            setBusy(true)
            setError(undefined)
            call((c) => c.team.addSsoDomain({ payload: { domain: domain.trim(), role } })).then((added) => {
              setBusy(false)
              setNotice(`${added.domain} was added (${added.role}).`)
              setDomain("")
              domains.reload()
            }, (e) => {
              setBusy(false)
              setError(e)
            })
          }}
        >
          <div className="field">
            <label htmlFor="sso-domain">Domain</label>
            <input
              id="sso-domain"
              required
              placeholder="example.com"
              value={domain}
              onChange={(e) => setDomain(e.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="sso-role">Role of new members</label>
            <select id="sso-role" value={role} onChange={(e) => setRole(e.target.value as typeof SsoDomainRole.Type)}>
              {domainRoles.map((r) => <option key={r} value={r}>{r}</option>)}
            </select>
          </div>
          <button type="submit" className="primary" disabled={busy}>Add domain</button>
        </form>
      )}
    </section>
  )
}

const Audit = () => {
  const [page, setPage] = useState(1)
  const audit = useLoad(() => call((c) => c.team.audit({ urlParams: { page, per_page: 20 } })), [page])
  return (
    <section aria-labelledby="audit-heading">
      <h2 id="audit-heading">Audit log</h2>
      <ErrorText error={audit.error} />
      {audit.data !== undefined && (
        <>
          <Table label="Audit log">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
                <th scope="col">On</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {audit.data.data.map((entry) => (
                <tr key={entry.id}>
                  <td>{formatTime(entry.at)}</td>
                  <td>{entry.actor ?? "operator"}</td>
                  <td>
                    <code>{entry.action}</code>
                  </td>
                  <td>{entry.target ?? "—"}</td>
                  <td>
                    {Object.keys(entry.detail).length === 0 ? "—" : <code>{JSON.stringify(entry.detail)}</code>}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
          <p className="pager">
            <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>Newer</button>
            <span>Page {page}</span>
            <button type="button" disabled={!audit.data.has_more} onClick={() => setPage(page + 1)}>Older</button>
          </p>
        </>
      )}
    </section>
  )
}

export const Team = ({ me }: { readonly me: Session }) => {
  const members = useLoad(() => call((c) => c.team.members()), [])
  const [error, setError] = useState<unknown>()
  const [notice, setNotice] = useState<string | undefined>()
  const canManage = me.role === "owner" || me.role === "admin"
  const manageable = (m: typeof Member.Type) => canManage && (me.role === "owner" || m.role !== "owner")
  const assignable = roles.filter((r) => me.role === "owner" || r !== "owner")

  const remove = (m: typeof Member.Type) => {
    setError(undefined)
    call((c) => c.team.removeMember({ path: { user_id: m.user_id } })).then(() => {
      setNotice(`${m.email} was removed.`)
      members.reload()
    }, setError)
  }

  return (
    <Page title="Team">
      {notice !== undefined && <Notice>{notice}</Notice>}
      <ErrorText error={error ?? members.error} />
      {members.data !== undefined && (
        <Table label="Members">
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Role</th>
              <th scope="col">Two-factor</th>
              <th scope="col">Joined</th>
              {canManage && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {members.data.data.map((m) => (
              <tr key={m.user_id}>
                <td>{m.email}{m.user_id === me.user.id ? " (you)" : ""}</td>
                <td>{m.role}</td>
                <td>{m.totp_enabled ? "on" : "off"}</td>
                <td>{formatTime(m.joined_at)}</td>
                {canManage && (
                  <td className="row-actions">
                    {manageable(m) && (
                      <>
                        <RoleChange
                          member={m}
                          rolesFor={assignable}
                          onChanged={(changed) => {
                            setNotice(`${changed.email} is now ${changed.role}.`)
                            members.reload()
                          }}
                        />
                        <Confirm
                          label="Remove"
                          question={`Remove ${m.email} from the organisation?`}
                          confirmLabel="Yes, remove"
                          onConfirm={() => remove(m)}
                        />
                      </>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {canManage && <Invite inviteRoles={assignable} />}
      <SsoDomains canManage={canManage} />
      <Audit />
    </Page>
  )
}
