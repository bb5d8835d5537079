export default {
  ticket: {
    cc_emails: ["john.doe@freshservice.com"],
    fwd_emails: ["john.doe@freshservice.com"],
    reply_cc_emails: ["john.doe@freshservice.com"],
    fr_escalated: true,
    spam: true,
    priority: 2,
    requester_id: 1400023894234,
    source: 1,
    status: 2,
    subject: 'Printer not connected"',
    id: 14000239432,
    type: "Incident",
    due_by: "2021-11-22T16:58:45Z",
    fr_due_by: "2021-11-22T16:58:45Z",
    is_escalated: true,
    description: "<div>How do I connect printer?</div>",
    description_text: "How do I connect printer?",
    custom_fields: {
      choice: "First Choice",
      employee_id: "E1234"
    },
    created_at: "2021-11-22T16:58:45Z",
    updated_at: "2021-11-22T16:58:45Z",
    tags: ["Hardware", "Network", "VPN"],
    attachments: [
      {
        id: 14000884384,
        content_type: "application/pdf",
        size: 1024,
        name: "doc1.pdf",
        attachment_url: "https://s3.amazonaws.com/fs/doc1.pdf"
      }
    ]
  }
};
